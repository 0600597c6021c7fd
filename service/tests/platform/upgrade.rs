//! Upgrades keep every row: a database as release 2.3.0 left it (`tests/fixtures/upgrade`,
//! written through that release's API by its `make-fixture`: payouts intra-bank and NIP, one
//! reversed, one held and left held, one cancelled, a collection, a webhook endpoint with its
//! events and failed attempts, a second member invited, a custom role, sessions and OTPs) is
//! upgraded in place by `kobo migrate`, and every row of every table reads back the same, in
//! the store's own types (on PostgreSQL: ids as `uuid`, times as `timestamptz`, flags as
//! `boolean`), and the ledger verifies. Migration 0028 (running balances) adds what it says it
//! adds and nothing else: the `REV-` credit of the release it finds (the cancelled transfer's),
//! which the transfer now names, and each transaction's running balance, recomputed here.

use std::process::Command;

use chrono::{DateTime, Utc};

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

/// The credit of the fixture's cancelled transfer, which migration 0028 writes: amount, fee and
/// VAT (120,000.00 + 50.00 + 3.75).
const RELEASED_KOBO: i64 = 12_005_375;

fn column(row: &std::collections::BTreeMap<String, Option<String>>, name: &str) -> Option<String> {
    row.get(name).cloned().flatten()
}

/// The reference of the fixture's one cancelled transfer (each store's fixture was made by its
/// own run), and of its release's credit.
fn cancelled(transfers: &TableRows) -> (String, String) {
    let cancelled: Vec<String> = transfers
        .iter()
        .filter(|row| column(row, "transfer_status").as_deref() == Some("cancelled"))
        .filter_map(|row| column(row, "reference_number"))
        .collect();
    assert_eq!(cancelled.len(), 1, "the fixture cancels one transfer");
    let reference = cancelled[0].clone();
    let released = format!("REV-{}", &reference[4..]);
    (reference, released)
}

/// `after`'s rows hold `before`'s, column by column (a migration may add columns, never lose
/// one or a value), but the rows and values migration 0028 adds for the release of
/// `cancelled`'s transfer.
fn assert_kept(table: &str, before: &TableRows, after: &TableRows, cancelled: &(String, String)) {
    let (cancelled, released) = (cancelled.0.as_str(), cancelled.1.as_str());
    let mut after = after.clone();
    let mut before = before.clone();
    match table {
        "transactions" => {
            let (added, kept): (TableRows, TableRows) = after
                .into_iter()
                .partition(|row| column(row, "reference_number").as_deref() == Some(released));
            assert_eq!(added.len(), 1, "{table}: the release's credit, once");
            let credit = &added[0];
            assert_eq!(column(credit, "amount"), Some(RELEASED_KOBO.to_string()));
            assert_eq!(
                column(credit, "transaction_type").as_deref(),
                Some("credit")
            );
            assert_eq!(column(credit, "category").as_deref(), Some("reversal"));
            assert_eq!(column(credit, "status").as_deref(), Some("success"));
            assert_eq!(
                column(credit, "narration"),
                Some(format!(
                    "Release of {cancelled}: Cancelled by the initiator"
                ))
            );
            after = kept;
        }
        "internal_accounts" => {
            // Migrations 0032 (PostgreSQL) and 0023 (SQLite): the bulk transfers' reserve.
            let (added, kept): (TableRows, TableRows) = after.into_iter().partition(|row| {
                column(row, "code").is_some_and(|code| code.ends_with(".bulk_reserved"))
            });
            assert_eq!(
                added.len(),
                2,
                "{table}: the bulk reserve of each environment"
            );
            after = kept;
        }
        "transfers" => {
            let named = |rows: &mut TableRows| {
                for row in rows.iter_mut() {
                    let this = column(row, "reference_number").as_deref() == Some(cancelled);
                    let reversal = row.remove("reversal_reference_number").flatten();
                    if this {
                        return reversal;
                    }
                }
                None
            };
            assert_eq!(named(&mut before), None);
            assert_eq!(named(&mut after).as_deref(), Some(released));
            for rows in [&mut before, &mut after] {
                for row in rows.iter_mut() {
                    row.remove("reversal_reference_number");
                }
            }
        }
        _ => {}
    }
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
        project(&before, &columns),
        project(&after, &columns),
        "{table}: a value changed"
    );
}

/// A transaction as the running balances' check reads it: account, amount, type, running
/// balance, time.
type Row = (String, i64, String, i64, DateTime<Utc>);

/// Every transaction's running balance is its account's transactions summed in order up to it,
/// recomputed here from the rows; each account's last is its balance; and the balance before
/// any moment is the last running balance before it.
async fn assert_running_balances(store: &Store) {
    let (rows, balances): (Vec<Row>, Vec<(String, i64)>) =
        match (store.sqlite_pool(), store.postgres_pool()) {
            (Some(pool), _) => (
                sqlx::query_as(
                    "SELECT account_id, amount, transaction_type, balance_after, created_at \
                     FROM transactions ORDER BY account_id, created_at, id",
                )
                .fetch_all(pool)
                .await
                .unwrap(),
                sqlx::query_as("SELECT id, balance FROM accounts")
                    .fetch_all(pool)
                    .await
                    .unwrap(),
            ),
            (_, Some(pool)) => (
                sqlx::query_as(
                    "SELECT account_id::text, amount, transaction_type, balance_after, \
                       created_at FROM transactions ORDER BY account_id, created_at, id",
                )
                .fetch_all(pool)
                .await
                .unwrap(),
                sqlx::query_as("SELECT id::text, balance FROM accounts")
                    .fetch_all(pool)
                    .await
                    .unwrap(),
            ),
            _ => unreachable!("a store is SQLite or PostgreSQL"),
        };
    let mut last: std::collections::BTreeMap<String, i64> = std::collections::BTreeMap::new();
    for (account, amount, kind, balance_after, at) in &rows {
        let running = last.entry(account.clone()).or_insert(0);
        *running += if kind == "credit" { *amount } else { -amount };
        assert_eq!(balance_after, running, "{account} at {at}");
        let before = kobo::datastore::transactions::balance_before(
            store,
            account,
            *at + chrono::Duration::microseconds(1),
        )
        .await
        .unwrap();
        assert_eq!(
            before, *balance_after,
            "the balance of {account} just after {at}"
        );
    }
    for (account, balance) in balances {
        assert_eq!(
            last.get(&account).copied().unwrap_or(0),
            balance,
            "{account}"
        );
    }
    // The fixture's business account: its releases and reversals included.
    assert!(
        last.values().any(|balance| *balance == 226_991_937),
        "{last:?}"
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
    let release = cancelled(&before["transfers"]);
    for (table, rows) in &before {
        let kept = after
            .get(table)
            .unwrap_or_else(|| panic!("table {table} is gone"));
        assert_kept(table, rows, kept, &release);
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
    assert_running_balances(&store).await;
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

/// Migration 0028 refuses a ledger whose transactions do not add up to an account's balance:
/// the upgrade stops with nothing done, and says which account, rather than give every
/// statement of the account a wrong running balance.
async fn an_upgrade_stops_on_a_balance_its_transactions_do_not_explain(kind: StoreKind) {
    let database = EmptyDatabase::new(kind).await;
    load_dump(&database.url, dump_of(kind)).await;
    {
        let store = Store::connect(&database.url).await.unwrap();
        let astray =
            "UPDATE accounts SET balance = balance + 1 WHERE account_number = '1000000014'";
        match (store.sqlite_pool(), store.postgres_pool()) {
            (Some(pool), _) => {
                sqlx::query(astray).execute(pool).await.unwrap();
            }
            (_, Some(pool)) => {
                sqlx::query(astray).execute(pool).await.unwrap();
            }
            _ => unreachable!("a store is SQLite or PostgreSQL"),
        }
        store.close().await;
    }
    let migrate = Command::new(env!("CARGO_BIN_EXE_kobo"))
        .args(["migrate", "--database-url", &database.url])
        .output()
        .expect("kobo migrate runs");
    let said = String::from_utf8_lossy(&migrate.stderr);
    assert!(!migrate.status.success(), "kobo migrate: {said}");
    let expected = match kind {
        StoreKind::Sqlite => "every_account_s_transactions_sum_to_its_balance",
        StoreKind::Postgres => {
            "the transactions of accounts 1000000014 do not sum to their balance"
        }
    };
    assert!(said.contains(expected), "{said}");
    // Nothing of the migration was kept: the column is not there.
    let store = Store::connect(&database.url).await.unwrap();
    let probe = "SELECT balance_after FROM transactions LIMIT 1";
    let missing = match (store.sqlite_pool(), store.postgres_pool()) {
        (Some(pool), _) => sqlx::query(probe).execute(pool).await.is_err(),
        (_, Some(pool)) => sqlx::query(probe).execute(pool).await.is_err(),
        _ => unreachable!("a store is SQLite or PostgreSQL"),
    };
    assert!(missing, "migration 0028 was rolled back");
    store.close().await;
}

on_both_stores!(kind: an_upgrade_stops_on_a_balance_its_transactions_do_not_explain);
