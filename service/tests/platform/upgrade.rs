//! Upgrades keep every row: a database as release 2.3.0 left it (`tests/fixtures/upgrade`,
//! written through that release's API by its `make-fixture`: payouts intra-bank and NIP, one
//! reversed, one held and left held, one cancelled, a collection, a webhook endpoint with its
//! events and failed attempts, a second member invited, a custom role, sessions and OTPs) is
//! upgraded in place by `kobo migrate`, and every row of every table reads back the same, in
//! the store's own types (on PostgreSQL: ids as `uuid`, times as `timestamptz`, flags as
//! `boolean`), and the ledger verifies.

use std::process::Command;

use kobo::kernel::store::Store;
use kobo::on_both_stores;
use kobo::testkit::sql::{every_row, load_dump, TableRows};
use kobo::testkit::{EmptyDatabase, StoreKind};

fn dump_of(kind: StoreKind) -> &'static str {
    match kind {
        StoreKind::Sqlite => include_str!("../fixtures/upgrade/api-2.3.0.sqlite.sql"),
        StoreKind::Postgres => include_str!("../fixtures/upgrade/api-2.3.0.postgres.sql"),
    }
}

/// A value as either release writes it: a list, once a JSON array in text, is compared by its
/// items (PostgreSQL now keeps it as `text[]`).
fn comparable(value: &Option<String>) -> Option<String> {
    let text = value.as_ref()?;
    match serde_json::from_str::<Vec<String>>(text) {
        Ok(items) if text.starts_with('[') => Some(items.join(",")),
        _ => Some(text.clone()),
    }
}

/// `after`'s rows hold `before`'s, column by column (a migration may add columns, never lose
/// one or a value).
fn assert_kept(table: &str, before: &TableRows, after: &TableRows) {
    assert_eq!(before.len(), after.len(), "{table}: rows before and after");
    let project = |rows: &TableRows, columns: &[&String]| {
        let mut projected: Vec<Vec<Option<String>>> = rows
            .iter()
            .map(|row| {
                columns
                    .iter()
                    .map(|column| {
                        let value = row
                            .get(*column)
                            .unwrap_or_else(|| panic!("{table}.{column} is gone"));
                        comparable(value)
                    })
                    .collect()
            })
            .collect();
        projected.sort();
        projected
    };
    let Some(first) = before.first() else { return };
    let columns: Vec<&String> = first.keys().collect();
    assert_eq!(
        project(before, &columns),
        project(after, &columns),
        "{table}: a value changed"
    );
}

async fn a_release_database_upgrades_in_place_and_keeps_every_row(kind: StoreKind) {
    let database = EmptyDatabase::new(kind).await;
    load_dump(&database.url, dump_of(kind)).await;
    let before = {
        let store = Store::connect(&database.url).await.unwrap();
        let rows = every_row(&store).await;
        store.close().await;
        rows
    };
    for (table, at_least) in [
        ("transfers", 5),
        ("postings", 30),
        ("accounts", 2),
        ("events", 10),
        ("webhook_attempts", 10),
        ("members", 2),
        ("sessions", 1),
    ] {
        assert!(before[table].len() >= at_least, "the fixture holds {table}");
    }

    let migrate = Command::new(env!("CARGO_BIN_EXE_kobo"))
        .args(["migrate", "--database-url", &database.url])
        .output()
        .expect("kobo migrate runs");
    assert!(
        migrate.status.success(),
        "kobo migrate: {}",
        String::from_utf8_lossy(&migrate.stderr)
    );

    let store = Store::connect(&database.url).await.unwrap();
    let after = every_row(&store).await;
    for (table, rows) in &before {
        let kept = after
            .get(table)
            .unwrap_or_else(|| panic!("table {table} is gone"));
        assert_kept(table, rows, kept);
    }
    if let Some(pool) = store.postgres_pool() {
        // The store's own types now, not the release's text.
        let types: Vec<(String, String)> = sqlx::query_as(
            "SELECT column_name::text, data_type::text FROM information_schema.columns \
             WHERE table_name = 'transfers' AND column_name IN ('id', 'created_at') \
             ORDER BY column_name",
        )
        .fetch_all(pool)
        .await
        .unwrap();
        assert_eq!(
            types,
            [
                (
                    "created_at".to_owned(),
                    "timestamp with time zone".to_owned()
                ),
                ("id".to_owned(), "uuid".to_owned())
            ]
        );
    }
    let report = kobo::money::verify::verify(&store).await.unwrap();
    assert!(report.ok, "{:#?}", report.discrepancies);
    // A second run has nothing left to do.
    let again = Command::new(env!("CARGO_BIN_EXE_kobo"))
        .args(["migrate", "--database-url", &database.url])
        .output()
        .unwrap();
    assert!(again.status.success());
    store.close().await;
}

on_both_stores!(kind: a_release_database_upgrades_in_place_and_keeps_every_row);
