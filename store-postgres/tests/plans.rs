//! The plans PostgreSQL keeps: a prepared statement's generic plan (made without its
//! parameters' values) must still read the keyset indexes as ranges, in order, whatever the
//! optional filters. The statements are the ones the crate prepares, read from its offline
//! query data.

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
    let mut connection = db.pool.acquire().await.unwrap();
    connection
        .execute("SET plan_cache_mode = force_generic_plan")
        .await
        .unwrap();
    // The statement is the crate's own, read from its query data.
    connection
        .execute(sqlx::AssertSqlSafe(format!("PREPARE page AS {sql}")))
        .await
        .unwrap();
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "EXPLAIN EXECUTE page({arguments})"
    )))
    .fetch_all(&mut *connection)
    .await
    .unwrap();
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
           narration_key, created_at) \
         SELECT gen_random_uuid(), '6f1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f', \
           CASE WHEN g % 10 = 0 THEN '9c1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e5f'::uuid \
                ELSE '9c1c2a3e-1b2c-4d5e-8f90-0a1b2c3d4e60'::uuid END, \
           'e0000001-1b2c-4d5e-8f90-0a1b2c3d4e5f', g, 'R' || g, 'credit', 'collection', \
           'success', 'nip', 1, 'n', 'n', now() - g * interval '1 second' \
         FROM generate_series(1, 30000) g; \
         ANALYZE",
    )
    .execute(&db.pool)
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
    db.finish().await;
}
