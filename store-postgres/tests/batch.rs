//! `batch::run`: a batch of every kind of write lands in one statement and reads back.

mod common;

use chrono::Duration;
use common::{new_id, now, TestDb};
use kobo_store::batch::{Batch, Write};
use kobo_store_postgres::*;
use sqlx::Row;

#[tokio::test]
async fn a_batch_of_every_write_lands_in_one_statement() {
    let db = TestDb::migrated().await;
    let at = now();
    let business = business(&db).await;
    let account = new_id();
    let mut tx = db.pool.inner().begin().await.unwrap();
    accounts::insert_main(&mut tx, &account, &business, "1000000001", "Ada Foods", at)
        .await
        .unwrap();
    let key = kobo_store::idempotency_keys::KeyOf {
        business_id: &business,
        operation: "payout",
        key: "k1",
    };
    assert!(
        idempotency_keys::claim(&mut tx, &key, "h", at, at - Duration::days(1))
            .await
            .unwrap()
    );
    // Marks the commands before the batch's, to tell them apart.
    sqlx::query("SELECT 1").execute(&mut *tx).await.unwrap();

    let mut batch = Batch::new();
    // The transfer, its transaction and the entry come in the reverse of the order their
    // foreign keys need: they are checked at the statement's end.
    let debit = uuid::Uuid::new_v4();
    let entry_id = new_id();
    let transfer = new_id();
    batch.push(Write::Transfer(Box::new(
        kobo_store::transfers::NewTransfer {
            row: kobo_store::transfers::TransferRow {
                id: transfer.clone(),
                reference_number: "TRF1".into(),
                reference: None,
                amount: 500,
                fee: 0,
                vat: 0,
                transfer_status: "processing".into(),
                approval_status: "not_required".into(),
                transfer_type: "inter".into(),
                source_account_number: "1000000001".into(),
                beneficiary_account_number: "0123456789".into(),
                beneficiary_account_name: "Landlord".into(),
                bank_code: "000013".into(),
                bank_name: "GTBank".into(),
                narration: "Rent".into(),
                session_id: None,
                failure_reason: None,
                reversal_reference_number: None,
                initiated_by: business.clone(),
                initiated_via: "integration".into(),
                reviewed_by: None,
                expires_at: None,
                created_at: at,
                updated_at: at,
            },
            business_id: business.clone(),
            source_account_id: account.clone(),
            beneficiary_account_id: None,
            debit_transaction_id: Some(debit.to_string()),
            fee_transaction_id: None,
            day: "2026-11-26".into(),
            credential_issued_by: Some("operator".into()),
        },
    )));
    transactions::record_into(
        &mut batch,
        kobo_store::transactions::NewTransaction {
            id: debit,
            business_id: business.clone(),
            account_id: account.clone(),
            entry_id: entry_id.clone(),
            sequence: 1,
            reference_number: "TRF1".into(),
            transaction_type: "debit".into(),
            category: "transfer".into(),
            status: "pending".into(),
            channel: "nip".into(),
            amount: 500,
            narration: "Rent".into(),
            session_id: Some("S1".into()),
            originator: Some(kobo_store::transactions::Originator {
                account_number: "1".into(),
                account_name: "O".into(),
                bank_code: "2".into(),
                bank_name: "B".into(),
            }),
            created_at: at,
            settled: true,
        },
    );
    batch.push(Write::Entry(kobo_store::batch::NewEntry {
        id: entry_id.clone(),
        business_id: business.clone(),
        kind: "transfer".into(),
        postings: vec![
            (new_id(), account.clone(), -500),
            (new_id(), "00000000-0000-4000-8000-000000000002".into(), 500),
        ],
        at,
    }));
    let event = events::record_into(
        &mut batch,
        &business,
        "transfer.pending",
        "{\"b\": 1}".into(),
        at,
    );
    logs::audit_into(
        &mut batch,
        at,
        kobo_store::logs::NewAuditEntry {
            business_id: business.clone(),
            action: "payout".into(),
            user_name: "API".into(),
            user_id: None,
            ip_address: "10.0.0.1".into(),
            response_code: 201,
            target_type: None,
            target_id: None,
            request_id: "r".into(),
        },
    );
    idempotency_keys::complete_into(&mut batch, &key, "\"first\"".into());
    idempotency_keys::complete_into(&mut batch, &key, "\"last\"".into());
    batch::run(&mut tx, batch).await.unwrap();

    // One statement: every row it wrote carries the same command id.
    let commands = sqlx::query(
        "SELECT cmin::text::int AS command FROM journal_entries \
         UNION SELECT cmin::text::int FROM postings \
         UNION SELECT cmin::text::int FROM transactions \
         UNION SELECT cmin::text::int FROM transfers \
         UNION SELECT cmin::text::int FROM events \
         UNION SELECT cmin::text::int FROM audit_logs \
         UNION SELECT cmin::text::int FROM idempotency_keys",
    )
    .fetch_all(&mut *tx)
    .await
    .unwrap();
    assert_eq!(commands.len(), 1, "one statement wrote every row");
    tx.commit().await.unwrap();

    let found = transfers::find(
        &db.pool,
        &business,
        kobo_store::transfers::Lookup::Id(&transfer),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(found.transfer_status, "processing");
    assert_eq!(found.created_at, at);
    let held = transfers::held(&db.pool, &business, "TRF1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(held.debit_transaction_id, Some(debit.to_string()));
    assert_eq!(held.credential_issued_by.as_deref(), Some("operator"));
    let listed = transactions::list(
        &db.pool,
        kobo_store::transactions::Listing::Settlements,
        &business,
        &Default::default(),
        &kobo_store::transactions::Window {
            size: 10,
            cursor: None,
            offset: None,
        },
    )
    .await
    .unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, debit);
    assert_eq!(listed[0].session_id.as_deref(), Some("S1"));
    assert_eq!(listed[0].originator_bank_name.as_deref(), Some("B"));
    assert_eq!(audit::postings_total(&db.pool).await.unwrap(), 0);
    // The debit carries the customer's posting and the entry's row (migration 0025); the
    // internal account's posting is a row of `postings`.
    let rows = async |sql: &str| -> i64 {
        sqlx::query(sqlx::AssertSqlSafe(sql.to_owned()))
            .fetch_one(db.pool.inner())
            .await
            .unwrap()
            .get(0)
    };
    assert_eq!(rows("SELECT COUNT(*) FROM journal_entries").await, 0);
    assert_eq!(rows("SELECT COUNT(*) FROM ledger_entries").await, 1);
    assert_eq!(rows("SELECT COUNT(*) FROM postings").await, 1);
    assert_eq!(rows("SELECT COUNT(*) FROM ledger_postings").await, 2);
    assert_eq!(
        rows("SELECT COUNT(*) FROM transactions WHERE carries_posting AND entry_kind = 'transfer'")
            .await,
        1
    );
    // No endpoint: the event is recorded skipped, never queued.
    let delivery = events::find_delivery(&db.pool, &business, &event, at)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(delivery.delivery_status, "skipped");
    assert_eq!(delivery.next_attempt_at, None);
    assert_eq!(delivery.payload, "{\"b\": 1}");
    let day: String = sqlx::query("SELECT day::text FROM audit_logs")
        .fetch_one(db.pool.inner())
        .await
        .unwrap()
        .get(0);
    assert_eq!(day, at.format("%Y-%m-%d").to_string());
    let stored = idempotency_keys::find_unexpired(&db.pool, &key, at - Duration::days(1))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.response_data.as_deref(), Some("\"last\""));

    // A uniqueness refused is a conflict, and nothing of the batch is written.
    let mut tx = db.pool.inner().begin().await.unwrap();
    let mut again = Batch::new();
    logs::audit_into(
        &mut again,
        at,
        kobo_store::logs::NewAuditEntry {
            business_id: business.clone(),
            action: "x".into(),
            user_name: "API".into(),
            user_id: None,
            ip_address: "10.0.0.1".into(),
            response_code: 201,
            target_type: None,
            target_id: None,
            request_id: "r".into(),
        },
    );
    again.push(Write::Event(kobo_store::batch::NewEvent {
        id: event.clone(),
        business_id: business.clone(),
        kind: "transfer.pending".into(),
        payload: "{}".into(),
        at,
    }));
    let refused = batch::run(&mut tx, again).await.unwrap_err();
    assert!(refused.is_conflict(), "{refused:?}");
    tx.rollback().await.unwrap();
    let audits: i64 = sqlx::query("SELECT COUNT(*) FROM audit_logs")
        .fetch_one(db.pool.inner())
        .await
        .unwrap()
        .get(0);
    assert_eq!(audits, 1);
    db.finish().await;
}

/// An empty batch, run and committed, leaves every table of the schema as it was: as many
/// rows, the same rows. The same comparison sees a batch of one write change one table.
#[tokio::test]
async fn an_empty_batch_writes_nothing() {
    let db = TestDb::migrated().await;
    let business = business(&db).await;
    let key = kobo_store::idempotency_keys::KeyOf {
        business_id: &business,
        operation: "funds_transfer_api",
        key: "k1",
    };
    let mut tx = db.pool.inner().begin().await.unwrap();
    batch::run(&mut tx, claiming(&key, "\"first\"", now()))
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let before = every_table(&db).await;
    assert!(before.len() >= 20, "the schema's tables: {before:?}");
    assert_eq!(before["businesses"].0, 1);
    assert_eq!(before["idempotency_keys"].0, 1);

    let mut tx = db.pool.inner().begin().await.unwrap();
    batch::run(&mut tx, Batch::new()).await.unwrap();
    tx.commit().await.unwrap();
    assert_eq!(every_table(&db).await, before);

    let mut tx = db.pool.inner().begin().await.unwrap();
    let mut one = Batch::new();
    logs::audit_into(
        &mut one,
        now(),
        kobo_store::logs::NewAuditEntry {
            business_id: business.clone(),
            action: "x".into(),
            user_name: "API".into(),
            user_id: None,
            ip_address: "10.0.0.1".into(),
            response_code: 201,
            target_type: None,
            target_id: None,
            request_id: "r".into(),
        },
    );
    batch::run(&mut tx, one).await.unwrap();
    tx.commit().await.unwrap();
    let after = every_table(&db).await;
    let changed: Vec<&str> = after
        .iter()
        .filter(|(table, rows)| before.get(*table) != Some(rows))
        .map(|(table, _)| table.as_str())
        .collect();
    assert_eq!(changed, ["audit_logs"]);
    assert_eq!(after["audit_logs"].0, before["audit_logs"].0 + 1);
    db.finish().await;
}

/// Each table of the database's `public` schema: its number of rows and a digest of them all.
async fn every_table(db: &TestDb) -> std::collections::BTreeMap<String, (i64, String)> {
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT table_name::text FROM information_schema.tables \
         WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
    )
    .fetch_all(db.pool.inner())
    .await
    .unwrap();
    let mut contents = std::collections::BTreeMap::new();
    for table in tables {
        // The name is the catalog's, quoted as an identifier.
        let sql = format!(
            "SELECT COUNT(*), md5(COALESCE(string_agg(t::text, E'\\n' ORDER BY t::text), '')) \
             FROM \"{}\" t",
            table.replace('"', "\"\"")
        );
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .fetch_one(db.pool.inner())
            .await
            .unwrap();
        contents.insert(table, (row.get(0), row.get(1)));
    }
    contents
}

/// A business to hang keys on, committed.
async fn business(db: &TestDb) -> String {
    let business = new_id();
    let mut tx = db.pool.inner().begin().await.unwrap();
    businesses::insert(
        &mut tx,
        &businesses::NewBusiness {
            id: &business,
            name: "Ada Foods",
            status: "active",
            client_id: &format!("kobo_test_{business}"),
            client_secret_hash: "hash",
        },
        now(),
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    business
}

/// A batch claiming `key` with `data` as its answer, at `at`.
fn claiming(key: &kobo_store::idempotency_keys::KeyOf<'_>, data: &str, at: DateTime) -> Batch {
    let mut batch = Batch::new();
    batch.push(Write::Answer(kobo_store::batch::Answer {
        business_id: key.business_id.to_owned(),
        operation: key.operation.to_owned(),
        key: key.key.to_owned(),
        data: data.to_owned(),
        claim: Some(kobo_store::batch::KeyClaim {
            request_hash: format!("hash of {data}"),
            at,
            expired_before: at - Duration::hours(24),
        }),
    }));
    batch
}

type DateTime = chrono::DateTime<chrono::Utc>;

/// A key claimed by a batch with its answer is stored once: a second claim finds it taken
/// (and keeps it as it was), one made after it expired replaces it.
#[tokio::test]
async fn a_batch_claims_a_key_with_its_answer_once() {
    let db = TestDb::migrated().await;
    let business = business(&db).await;
    let key = kobo_store::idempotency_keys::KeyOf {
        business_id: &business,
        operation: "funds_transfer_api",
        key: "k1",
    };
    let at = now();
    let mut tx = db.pool.inner().begin().await.unwrap();
    batch::run(&mut tx, claiming(&key, "\"first\"", at))
        .await
        .unwrap();
    tx.commit().await.unwrap();

    let mut tx = db.pool.inner().begin().await.unwrap();
    let taken = batch::run(
        &mut tx,
        claiming(&key, "\"second\"", at + Duration::hours(1)),
    )
    .await
    .unwrap_err();
    assert!(matches!(taken, StoreError::KeyTaken), "{taken:?}");
    tx.rollback().await.unwrap();
    let stored = idempotency_keys::find_unexpired(&db.pool, &key, at - Duration::hours(1))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.response_data.as_deref(), Some("\"first\""));
    assert_eq!(stored.request_hash, "hash of \"first\"");

    // A day and more later the key has expired: claimed again, as if it had been deleted.
    let later = at + Duration::hours(25);
    let mut tx = db.pool.inner().begin().await.unwrap();
    batch::run(&mut tx, claiming(&key, "\"again\"", later))
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let stored = idempotency_keys::find_unexpired(&db.pool, &key, later - Duration::hours(24))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.response_data.as_deref(), Some("\"again\""));
    db.finish().await;
}

/// Two transactions claiming one key in their batches at once, on two connections: the second
/// waits for the first; it finds the key taken when the first commits, and claims it when the
/// first rolls back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_claimed_by_two_batches_at_once_waits_for_the_first() {
    let db = TestDb::migrated().await;
    let business = business(&db).await;
    for first_commits in [true, false] {
        let name = format!("k-{first_commits}");
        let key = kobo_store::idempotency_keys::KeyOf {
            business_id: &business,
            operation: "funds_transfer_api",
            key: &name,
        };
        let at = now();
        let mut first = db.pool.inner().begin().await.unwrap();
        batch::run(&mut first, claiming(&key, "\"first\"", at))
            .await
            .unwrap();
        let pool = db.pool.inner().clone();
        let owned = (business.clone(), name.clone());
        let second = tokio::spawn(async move {
            let key = kobo_store::idempotency_keys::KeyOf {
                business_id: &owned.0,
                operation: "funds_transfer_api",
                key: &owned.1,
            };
            let mut tx = pool.begin().await.unwrap();
            let ran = batch::run(&mut tx, claiming(&key, "\"second\"", at)).await;
            if ran.is_ok() {
                tx.commit().await.unwrap();
            }
            ran
        });
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert!(
            !second.is_finished(),
            "the second claim waits for the first"
        );
        if first_commits {
            first.commit().await.unwrap();
        } else {
            first.rollback().await.unwrap();
        }
        let second = second.await.unwrap();
        let stored = idempotency_keys::find_unexpired(&db.pool, &key, at - Duration::hours(1))
            .await
            .unwrap()
            .unwrap();
        if first_commits {
            assert!(matches!(second, Err(StoreError::KeyTaken)), "{second:?}");
            assert_eq!(stored.response_data.as_deref(), Some("\"first\""));
        } else {
            second.unwrap();
            assert_eq!(stored.response_data.as_deref(), Some("\"second\""));
        }
    }
    db.finish().await;
}
