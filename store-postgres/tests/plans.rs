//! The plans PostgreSQL keeps: a prepared statement's generic plan (made without its
//! parameters' values) must still read the keyset indexes as ranges, in order, whatever the
//! optional filters; a payout's lookups by a business and a key must read only the key's
//! unique index; and housekeeping's deletes by time must read only what expired. The
//! statements are the ones the crate prepares, read from its offline query data or from the
//! connection that ran them.

mod common;

use common::TestDb;
use sqlx::{Executor, Row};

/// The statement of the offline data whose text contains every one of `parts`.
fn statement(parts: &[&str]) -> String {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".sqlx");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        let data: serde_json::Value = serde_json::from_str(&text).unwrap();
        let query = data["query"].as_str().unwrap().to_owned();
        if parts.iter().all(|part| query.contains(part)) {
            found.push(query);
        }
    }
    assert_eq!(found.len(), 1, "one statement contains {parts:?}");
    found.pop().unwrap()
}

/// The generic plan of `sql` for `arguments` (SQL literals), one line a step.
async fn generic_plan(db: &TestDb, sql: &str, arguments: &str) -> String {
    let generic = "SET LOCAL plan_cache_mode = force_generic_plan";
    plan_after(db, generic, sql, arguments).await
}

/// The plan of `sql` for `arguments` (SQL literals) after `settings`, in a transaction of its
/// own, one line a step.
async fn plan_after(db: &TestDb, settings: &str, sql: &str, arguments: &str) -> String {
    let mut tx = db.pool.inner().begin().await.unwrap();
    tx.execute(sqlx::AssertSqlSafe(settings.to_owned()))
        .await
        .unwrap();
    // The statement is the crate's own, read from its query data.
    tx.execute(sqlx::AssertSqlSafe(format!("PREPARE planned AS {sql}")))
        .await
        .unwrap();
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "EXPLAIN EXECUTE planned({arguments})"
    )))
    .fetch_all(&mut *tx)
    .await
    .unwrap();
    // A prepared statement outlives the transaction: the connection goes back to the pool.
    tx.execute("DEALLOCATE planned").await.unwrap();
    rows.iter()
        .map(|row| row.get::<String, _>(0))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn transaction_pages_read_the_keyset_indexes_in_order_with_kept_plans() {
    let db = TestDb::migrated().await;
    sqlx::raw_sql(
        "INSERT INTO businesses (id, name, status, client_id, client_secret_hash, created_at, \
           updated_at) \
         VALUES ('6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', 'A', 'active', 'c', 'h', now(), now()); \
         INSERT INTO accounts (id, business_id, account_number, account_name, account_type, \
           account_class, status, created_at, updated_at) VALUES \
           ('9c1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', '6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', \
            '1000000014', 'A', 'pool', 'primary', 'active', now(), now()), \
           ('9c1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e60', '6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', \
            '1000000015', 'B', 'current', 'secondary', 'active', now(), now()); \
         INSERT INTO journal_entries VALUES ('e0000001-1b2c-4d5e-8f90-0a1b2c3d4e5f', \
           '6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', 'x', now()); \
         INSERT INTO transactions (id, business_id, account_id, entry_id, sequence, \
           reference_number, transaction_type, category, status, channel, amount, narration, \
           narration_key, created_at, settled, balance_after) \
         SELECT gen_random_uuid(), '6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', \
           CASE WHEN g % 10 = 0 THEN '9c1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f'::uuid \
                ELSE '9c1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e60'::uuid END, \
           'e0000001-1b2c-4d5e-8f90-0a1b2c3d4e5f', g, 'R' || g, 'credit', 'collection', \
           'success', 'nip', 1, 'n', 'n', now() - g * interval '1 second', g % 3 <> 0, g \
         FROM generate_series(1, 30000) g; \
         ANALYZE",
    )
    .execute(db.pool.inner())
    .await
    .unwrap();
    let nulls = "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL";
    let business = "'6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f'";

    let account_page = statement(&["transactions t JOIN", "o.account_number = $3"]);
    let plan = generic_plan(
        &db,
        &account_page,
        &format!("{business}, false, '1000000014', {nulls}, NULL, NULL, 51, 0"),
    )
    .await;
    assert!(plan.contains("transactions_account_keyset"), "{plan}");
    assert!(!plan.contains("Sort"), "{plan}");

    let business_page = statement(&["transactions t JOIN", "LIMIT $13 OFFSET $14"]);
    let plan = generic_plan(
        &db,
        &business_page,
        &format!("{business}, false, {nulls}, NULL, NULL, 51, 0"),
    )
    .await;
    assert!(plan.contains("transactions_keyset"), "{plan}");
    assert!(!plan.contains("Sort"), "{plan}");

    // A statement's reads (issue 61), on their kept plans: the balance before a moment is one
    // entry of the account's index read backwards, whatever the account's history; its lines
    // and totals a range of it, in order.
    let account = "'9c1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f'";
    let before = statement(&["SELECT balance_after FROM transactions", "created_at < $2"]);
    let plan = generic_plan(&db, &before, &format!("{account}, now()")).await;
    assert!(plan.contains("Limit"), "{plan}");
    assert!(
        plan.contains("Index Scan Backward using transactions_account_keyset"),
        "{plan}"
    );
    let lines = statement(&["(created_at, id) > ($2, $3)", "balance_after"]);
    let plan = generic_plan(
        &db,
        &lines,
        &format!("{account}, now() - interval '1 day', gen_random_uuid(), now(), 101"),
    )
    .await;
    assert!(plan.contains("transactions_account_keyset"), "{plan}");
    assert!(!plan.contains("Sort"), "{plan}");
    let totals = statement(&[
        "FILTER (WHERE transaction_type = 'credit')",
        "created_at >= $2",
    ]);
    let plan = generic_plan(
        &db,
        &totals,
        &format!("{account}, now() - interval '1 day', now()"),
    )
    .await;
    assert!(plan.contains("transactions_account_keyset"), "{plan}");

    // An account's sums (its collections, what it sent) read its range of the account's index
    // and nothing of the table: the columns they need are carried in it (migration 0020). Once
    // vacuumed, as autovacuum keeps a table that grows, the index alone answers.
    sqlx::raw_sql("VACUUM ANALYZE transactions")
        .execute(db.pool.inner())
        .await
        .unwrap();
    let sums = statement(&["FILTER (WHERE collection)", "account_id = ANY($1)"]);
    let custom = "SET LOCAL plan_cache_mode = force_custom_plan";
    let plan = plan_after(
        &db,
        custom,
        &sums,
        "ARRAY['9c1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f'::uuid], NULL, NULL",
    )
    .await;
    assert!(
        plan.contains("Index Only Scan using transactions_account_keyset"),
        "{plan}"
    );
    db.finish().await;
}

/// The audit and activity logs are keyed by their keyset (migration 0020): a page of either,
/// on its kept plan, reads the primary key as a range in order, whatever the filters.
#[tokio::test]
async fn log_pages_read_their_keys_in_order_with_kept_plans() {
    let db = TestDb::migrated().await;
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "INSERT INTO businesses (id, name, status, client_id, client_secret_hash, created_at, \
           updated_at) VALUES ('{BUSINESS}', 'B', 'active', 'c', 'h', now(), now()); \
         INSERT INTO audit_logs (id, business_id, action, user_name, ip_address, \
           response_code, day, request_id, created_at) \
         SELECT gen_random_uuid(), '{BUSINESS}', 'transfer.created', 'u', '127.0.0.1', 200, \
           current_date, 'r', now() - g * interval '1 second' FROM generate_series(1, 20000) g; \
         INSERT INTO activity_logs (id, business_id, endpoint, method, response_code, status, \
           message, ip_address, request_id, created_at) \
         SELECT gen_random_uuid(), '{BUSINESS}', '/v1/transfers', 'POST', 200, 'success', 'm', \
           '127.0.0.1', 'r', now() - g * interval '1 second' FROM generate_series(1, 20000) g; \
         INSERT INTO transfers (id, business_id, reference_number, source_account_id, \
           beneficiary_account_number, beneficiary_account_name, bank_code, bank_name, \
           transfer_type, amount, fee, vat, narration, transfer_status, approval_status, \
           initiated_by, initiated_via, day, created_at, updated_at, audit_user_name, \
           call_ip_address, call_request_id, activity_endpoint, activity_message) \
         SELECT gen_random_uuid(), '{BUSINESS}', 'TRF-' || g, gen_random_uuid(), '0123456789', \
           'N', '000013', 'B', 'inter', 100, 0, 0, 'n', 'success', 'not_required', 'i', \
           'integration', current_date, now() - g * interval '1 second', now(), 'u', \
           '127.0.0.1', 'r', '/v1/transfers', 'm' FROM generate_series(1, 20000) g; \
         ANALYZE"
    )))
    .execute(db.pool.inner())
    .await
    .unwrap();
    let business = format!("'{BUSINESS}'");
    // Each log is its table and the entries payouts' transfers carry (migration 0026): a page
    // takes a page of each, each read backwards by its business's key, never sorted whole.
    let pages = [
        ("audit_logs_pkey", "FROM audit_logs", 7),
        ("activity_logs_pkey", "FROM activity_logs", 9),
    ];
    for (key, table, filters) in pages {
        let page = statement(&[table, "ORDER BY created_at DESC"]);
        let nulls = vec!["NULL"; filters].join(", ");
        let plan = generic_plan(&db, &page, &format!("{business}, {nulls}, 51")).await;
        for key in [key, "transfers_keyset"] {
            assert!(
                plan.contains(&format!("Index Scan Backward using {key}")),
                "{plan}"
            );
        }
        assert!(
            plan.matches("Sort  ").count() <= 1 && plan.contains("Limit  ") && {
                // The one sort allowed is of the two pages, above both scans' limits.
                plan.find("Sort  ").is_none_or(|sort| {
                    plan.match_indices("Index Scan Backward")
                        .all(|(at, _)| at > sort)
                })
            },
            "{plan}"
        );
    }
    db.finish().await;
}

const BUSINESS: &str = "6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f";

/// The indexes a payout's lookups may read `transfers` and `accounts` through, each with what
/// its `Index Cond` must compare: the unique index of the key, never one that starts with
/// `business_id` alone (the business's transfers or accounts read and filtered).
const KEY_INDEXES: [(&str, &str); 4] = [
    ("transfers_reference_number_key", "(reference_number = "),
    // Unique on (reference, business_id): the client reference's own key, led by it (0017).
    ("transfers_reference", "(reference = "),
    ("accounts_account_number_key", "(account_number = "),
    // An account's parent, by its id.
    ("accounts_pkey", "(id = "),
];

/// The scans of `transfers` and `accounts` in `plan` that read anything but [`KEY_INDEXES`]
/// by their key: a sequential scan, another index, or a key index read by the business alone.
fn reads_beyond_the_key(plan: &[String]) -> Vec<String> {
    let mut wrong = Vec::new();
    for (at, line) in plan.iter().enumerate() {
        let scans = [" on transfers", " on accounts"]
            .iter()
            .any(|table| line.contains(table));
        if !scans {
            continue;
        }
        // The node's conditions: its lines up to the next node.
        let conditions: Vec<&String> = plan[at + 1..]
            .iter()
            .take_while(|next| !next.contains("->"))
            .collect();
        let by_key = KEY_INDEXES.iter().any(|(index, key)| {
            line.contains(&format!(" using {index} on "))
                && conditions
                    .iter()
                    .any(|condition| condition.contains("Index Cond:") && condition.contains(key))
        });
        if !by_key {
            wrong.push(line.trim().to_owned());
        }
    }
    wrong
}

/// The plan of `explain` on `connection`, one line a step.
async fn explain(connection: &mut sqlx::PgConnection, explain: String) -> Vec<String> {
    sqlx::query(sqlx::AssertSqlSafe(explain))
        .persistent(false)
        .fetch_all(connection)
        .await
        .unwrap()
        .iter()
        .map(|row| row.get::<String, _>(0))
        .collect()
}

/// Every payout with a client reference looks it up first, then reads its source account (and
/// an intra-bank beneficiary) by number. PostgreSQL's kept (generic) plan for such a lookup,
/// made while the table was young, read the business's transfers through another index and
/// filtered them on the key: every payout read all of its business's transfers (515 million
/// index entries over a 5-minute soak), and the soak fell behind. Here the statistics are a
/// young table's (many businesses, one transfer and one account each) when the business grows
/// to thousands of each; each lookup runs more than five times on one connection (after five,
/// PostgreSQL may keep a generic plan), and the generic plan of every statement it kept must
/// read only the key's unique index, the client reference's lookup (alone, and in the payout's
/// reads) among them.
#[tokio::test]
async fn a_payouts_lookups_never_run_from_a_kept_plan() {
    use kobo_store_postgres::transfers::Lookup;
    use kobo_store_postgres::{accounts, transfers};

    let db = TestDb::migrated().await;
    let transfer = |business: &str, number: &str, reference: &str, account: &str, at: &str| {
        format!(
            "SELECT gen_random_uuid(), {business}, {number}, {reference}, {account}, \
               '0123456789', 'B', '058', 'GT', 'inter', 100, 0, 0, 'n', 'success', \
               'not_required', 'api', 'integration', current_date, {at}, now()"
        )
    };
    let columns = "INSERT INTO transfers (id, business_id, reference_number, reference, \
         source_account_id, beneficiary_account_number, beneficiary_account_name, bank_code, \
         bank_name, transfer_type, amount, fee, vat, narration, transfer_status, \
         approval_status, initiated_by, initiated_via, day, created_at, updated_at) ";
    let accounts_columns = "INSERT INTO accounts (id, business_id, account_number, \
         account_name, account_type, account_class, status, created_at, updated_at) ";
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        // An ANALYZE by autovacuum would replace the young table's statistics.
        "ALTER TABLE transfers SET (autovacuum_enabled = false); \
         ALTER TABLE accounts SET (autovacuum_enabled = false); \
         INSERT INTO businesses (id, name, status, client_id, client_secret_hash, created_at, \
           updated_at) \
         SELECT CASE WHEN g = 0 THEN '{BUSINESS}'::uuid ELSE gen_random_uuid() END, 'B' || g, \
           'active', 'c' || g, 'h', now(), now() FROM generate_series(0, 300) g; \
         {accounts_columns} \
         SELECT gen_random_uuid(), id, (1000000000 + row_number() OVER ())::text, 'A', 'pool', \
           'primary', 'active', now(), now() FROM businesses; \
         {columns} {} FROM accounts a; \
         ANALYZE; \
         {accounts_columns} \
         SELECT gen_random_uuid(), '{BUSINESS}', (2000000000 + g)::text, 'V', 'virtual', \
           'secondary', 'active', now(), now() FROM generate_series(1, 3000) g; \
         {columns} {} FROM generate_series(1, 3000) g",
        transfer(
            "a.business_id",
            "'O' || a.account_number",
            "'ref-0'",
            "a.id",
            "now()"
        ),
        transfer(
            &format!("'{BUSINESS}'"),
            "'T' || g",
            "'ref-' || g",
            &format!(
                "(SELECT id FROM accounts WHERE business_id = '{BUSINESS}' \
                   AND account_type = 'pool')"
            ),
            "now() - g * interval '1 second'"
        ),
    )))
    .execute(db.pool.inner())
    .await
    .unwrap();
    let source: String = sqlx::query_scalar(
        "SELECT account_number FROM accounts WHERE business_id = $1::uuid \
         AND account_type = 'pool'",
    )
    .bind(BUSINESS)
    .fetch_one(db.pool.inner())
    .await
    .unwrap();

    let mut pooled = db.pool.inner().acquire().await.unwrap();
    let connection = &mut *pooled;
    for attempt in 1..=8 {
        let reference = format!("ref-{attempt}");
        let number = format!("T{attempt}");
        let owner = transfers::reference_owner(&mut *connection, BUSINESS, &reference);
        assert_eq!(owner.await.unwrap().as_deref(), Some(number.as_str()));
        let found = transfers::find(&mut *connection, BUSINESS, Lookup::Reference(&reference));
        assert_eq!(found.await.unwrap().unwrap().reference_number, number);
        let found = transfers::find(&mut *connection, BUSINESS, Lookup::ReferenceNumber(&number));
        assert_eq!(found.await.unwrap().unwrap().reference_number, number);
        let held = transfers::held(&mut *connection, BUSINESS, &number);
        assert_eq!(held.await.unwrap().unwrap().reference_number, number);
        let account = accounts::find_by_number_anywhere(&mut *connection, &source);
        assert_eq!(account.await.unwrap().unwrap().business_id, BUSINESS);
        let beneficiary = (2000000000 + attempt).to_string();
        let lookup = accounts::PayoutLookup {
            default_daily_limit: 1,
            business_id: BUSINESS,
            source: &source,
            intra_beneficiary: Some(&beneficiary),
            reference: Some(&reference),
            key: None,
        };
        let reads = accounts::payout_reads(&mut *connection, &lookup);
        let reads = reads.await.unwrap();
        assert_eq!(reads.len(), 2);
        assert!(reads
            .iter()
            .all(|read| read.reference_owner.as_deref() == Some(number.as_str())));
    }
    // Not another business's, by either key.
    let another = common::new_id();
    let theirs = transfers::held(&mut *connection, &another, "T1");
    assert!(theirs.await.unwrap().is_none());
    let theirs = transfers::reference_owner(&mut *connection, &another, "ref-1");
    assert!(theirs.await.unwrap().is_none());

    // The statements the connection kept, and the plan each would keep.
    let kept: Vec<(String, String, i32, i64)> = sqlx::query_as(
        "SELECT name, statement, cardinality(parameter_types), generic_plans + custom_plans \
         FROM pg_prepared_statements \
         WHERE statement LIKE '%FROM transfers%' OR statement LIKE '%FROM accounts%'",
    )
    .persistent(false)
    .fetch_all(&mut *connection)
    .await
    .unwrap();
    // `reference_owner` (and `find` by reference, the same statement), `find` by reference
    // number, `held`, `find_by_number_anywhere`, `payout_reads`.
    assert_eq!(kept.len(), 5, "{kept:#?}");
    sqlx::query("SET plan_cache_mode = force_generic_plan")
        .execute(&mut *connection)
        .await
        .unwrap();
    for (name, statement, parameters, runs) in &kept {
        assert!(*runs > 5, "{statement}: run {runs} times");
        let nulls = vec!["NULL"; *parameters as usize].join(", ");
        let plan = explain(connection, format!("EXPLAIN EXECUTE {name}({nulls})")).await;
        let wrong = reads_beyond_the_key(&plan);
        assert!(wrong.is_empty(), "{statement}\nreads {wrong:?}: {plan:#?}");
        assert!(
            plan.iter().any(|line| line.contains(" using ")),
            "{plan:#?}"
        );
    }
    drop(pooled);
    db.finish().await;
}

/// The deletes by time of a housekeeping pass (expired idempotency keys, the attempts of old
/// events, old events), on the tables every payout grows, and the index each must read.
const BY_TIME: [(&str, &str); 3] = [
    ("idempotency_keys_created", "DELETE FROM idempotency_keys"),
    ("events_business", "DELETE FROM webhook_attempts"),
    ("events_business", "DELETE FROM events"),
];

/// Each reads only the expired rows, through an index on their time, instead of the whole
/// table: here a few thousand recent keys and delivered events (each with an attempt) and ten
/// expired of each. (On empty tables, every plan costs the same: PostgreSQL read all the
/// attempts and events through other indexes. The tables are still small, so PostgreSQL is
/// told not to prefer a scan.)
#[tokio::test]
async fn purges_read_only_what_expired() {
    let db = TestDb::migrated().await;
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "INSERT INTO businesses (id, name, status, client_id, client_secret_hash, created_at, \
           updated_at) VALUES ('{BUSINESS}', 'B', 'active', 'c', 'h', now(), now()); \
         INSERT INTO idempotency_keys (business_id, operation, idempotency_key, request_hash, \
           created_at) \
         SELECT '{BUSINESS}', 'payout', 'k' || g, 'h', \
           CASE WHEN g <= 10 THEN '2025-06-01'::timestamptz ELSE now() END \
         FROM generate_series(1, 3000) g; \
         INSERT INTO events (id, business_id, type, payload, created_at, delivery_status) \
         SELECT gen_random_uuid(), '{BUSINESS}', 'transfer.success', '{{}}', \
           CASE WHEN g <= 10 THEN '2025-06-01'::timestamptz ELSE now() END, 'delivered' \
         FROM generate_series(1, 3000) g; \
         INSERT INTO webhook_attempts (id, event_id, attempted_at, url, latency_ms) \
         SELECT gen_random_uuid(), id, created_at, 'https://example.com', 1 FROM events; \
         ANALYZE"
    )))
    .execute(db.pool.inner())
    .await
    .unwrap();
    let mut connection = db.pool.inner().acquire().await.unwrap();
    connection
        .execute("SET enable_seqscan = off")
        .await
        .unwrap();
    for (index, delete) in BY_TIME {
        // The statement as `idempotency_keys::purge_expired`, `events::purge_attempts` and
        // `events::purge` run it, from the crate's query data.
        let sql = statement(&[delete]);
        let plan = explain(
            &mut connection,
            format!(
                "EXPLAIN {}",
                sql.replace("$1", "'2026-01-01T00:00:00Z'::timestamptz")
            ),
        )
        .await;
        assert!(
            plan.iter().any(|line| line.contains(index)),
            "{sql}: {plan:#?}"
        );
        // The index is read as a range below the cutoff (each business's, for the events),
        // not whole.
        assert!(
            plan.iter()
                .any(|line| line.contains("Index Cond:") && line.contains("created_at < ")),
            "{sql}: {plan:#?}"
        );
    }
    drop(connection);
    db.finish().await;
}

/// The plan of the crate's statement containing `parts`, as a payout's transaction makes it
/// (after `settings`), with every argument NULL: a generic plan reads none of them.
async fn payout_plan(db: &TestDb, settings: &str, parts: &[&str]) -> String {
    let sql = statement(parts);
    let parameters = (1..).take_while(|n| sql.contains(&format!("${n}"))).count();
    plan_after(db, settings, &sql, &vec!["NULL"; parameters].join(", ")).await
}

/// A payout's two statements in its transaction, the ledger's (heads, daily total, balances)
/// and the batch's (the whole batch, and the payout's own: `payout_batch.sql`), and the two in
/// one (`payout_in_one.sql`, its gate's reads too), run on the plan each connection keeps (`PAYOUT_PLANS`): never planned
/// again, so it must be right at every size. On a freshly migrated database, where the planner
/// would rather scan the small tables, they read `accounts`, `businesses` and
/// `webhook_configurations` by index only; without `enable_seqscan = off` the same kept plans scan them whole, and would go
/// on scanning them as they grow.
#[tokio::test]
async fn a_payouts_statements_keep_plans_that_read_by_index() {
    let db = TestDb::migrated().await;
    let statements: [&[&str]; 4] = [
        &["WITH heads AS", "UPDATE accounts a"],
        &["INSERT INTO journal_entries", "claimed AS"],
        &["The batch of a payout", "claimed AS"],
        &["gate AS MATERIALIZED", "claimed AS"],
    ];
    // Each table read (not written), and the one index it may be read through: its key's.
    let keys = [
        (
            " on accounts ",
            "Index Scan using accounts_pkey on accounts ",
        ),
        (
            " on webhook_configurations ",
            "Index Scan using webhook_configurations_business_id_key on webhook_configurations ",
        ),
        (
            " on businesses b ",
            "Index Scan using businesses_pkey on businesses b ",
        ),
        (
            " on idempotency_keys k ",
            "Index Scan using idempotency_keys_pkey on idempotency_keys k ",
        ),
        // The gate of a payout in one statement (`payout_in_one.sql`): a key's row by its key,
        // not every key newer than the cutoff by `idempotency_keys_created`.
        (
            " on idempotency_keys i ",
            "Index Scan using idempotency_keys_pkey on idempotency_keys i ",
        ),
        (
            " on transfers t ",
            "Index Only Scan using transfers_reference on transfers t ",
        ),
        (
            " on daily_transfer_totals d ",
            "Index Scan using daily_transfer_totals_pkey on daily_transfer_totals d ",
        ),
    ];
    let mut read = Vec::new();
    for parts in statements {
        let plan = payout_plan(&db, kobo_store_postgres::PAYOUT_PLANS, parts).await;
        assert!(!plan.contains("Seq Scan"), "{plan}");
        // Joined a few rows at a time, by a lookup each: never by hashing or merging a table.
        assert!(!plan.contains("Hash Join"), "{plan}");
        assert!(!plan.contains("Merge Join"), "{plan}");
        let lines: Vec<&str> = plan.lines().collect();
        for (i, line) in lines
            .iter()
            .enumerate()
            .filter(|(_, line)| line.contains(" Scan "))
        {
            if let Some((table, by_key)) = keys.iter().find(|(table, _)| line.contains(table)) {
                assert!(line.contains(by_key), "{line}\n{plan}");
                // By its key's value, not the whole index in its order.
                let cond = lines[i + 1..]
                    .iter()
                    .take_while(|next| !next.contains("->"))
                    .any(|next| next.contains("Index Cond:"));
                assert!(cond, "{line} reads the whole index\n{plan}");
                read.push(*table);
            }
        }
    }
    for (table, _) in keys {
        assert!(read.contains(&table), "{table} is read");
    }
    // What the setting prevents: the generic plans chosen on the planner's costs alone.
    let generic_only = "SET LOCAL plan_cache_mode = force_generic_plan";
    let ledger = payout_plan(&db, generic_only, statements[0]).await;
    assert!(ledger.contains("Seq Scan on accounts"), "{ledger}");
    let batch = payout_plan(&db, generic_only, statements[1]).await;
    assert!(
        batch.contains("Seq Scan on webhook_configurations"),
        "{batch}"
    );
    db.finish().await;
}
