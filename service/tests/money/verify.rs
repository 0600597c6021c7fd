//! `kobo ledger verify` finds what does not add up: each kind of discrepancy, made on purpose
//! behind the ledger's back.

use kobo::on_both_stores;
use kobo::testkit::TestKit;

async fn sql(kit: &TestKit, statement: &str, bind: &str) {
    kit.sql(statement).bind(bind).execute().await;
}

async fn kinds(kit: &TestKit) -> Vec<&'static str> {
    let report = kobo::money::verify::verify(&kit.store).await.unwrap();
    assert_eq!(report.ok, report.discrepancies.is_empty());
    let mut kinds: Vec<&'static str> = report.discrepancies.iter().map(|d| d.kind).collect();
    kinds.sort();
    kinds.dedup();
    kinds
}

async fn every_kind_of_discrepancy_is_named(kit: TestKit) {
    let token = kit.integration_token().await;
    let main = kit.business.main_account_number.clone();
    let credit = kit.credit(&token, &main, "100.00").await;
    let reference = credit["reference_number"].as_str().unwrap().to_owned();
    assert_eq!(kinds(&kit).await, Vec::<&str>::new());

    // A running total of the daily limit for a day without transfers.
    sql(
        &kit,
        "INSERT INTO daily_transfer_totals (business_id, day, amount) VALUES ($1, '2026-01-01', 5)",
        &kit.business.business_id,
    )
    .await;
    assert_eq!(kinds(&kit).await, vec!["daily_total"]);
    sql(
        &kit,
        "DELETE FROM daily_transfer_totals WHERE business_id = $1",
        &kit.business.business_id,
    )
    .await;

    // A place of the business's ledger handed out twice: a second credit takes the first's
    // sequence.
    let second = kit.credit(&token, &main, "1.00").await;
    let second = second["reference_number"].as_str().unwrap().to_owned();
    let sequence = async |reference: &str| -> i64 {
        let found = kit
            .sql("SELECT sequence FROM transactions WHERE reference_number = $1")
            .bind(reference)
            .texts()
            .await;
        found[0].parse().unwrap()
    };
    let (taken, kept) = (sequence(&reference).await, sequence(&second).await);
    let place = "UPDATE transactions SET sequence = $1 WHERE reference_number = $2";
    kit.sql(place).bind(taken).bind(&second).execute().await;
    assert_eq!(kinds(&kit).await, vec!["repeated_sequence"]);
    kit.sql(place).bind(kept).bind(&second).execute().await;
    assert_eq!(kinds(&kit).await, Vec::<&str>::new());

    // A posting added to the entry: the entry and the ledger no longer sum to zero, and the
    // account's postings no longer give its balance.
    sql(
        &kit,
        "INSERT INTO postings (id, entry_id, account_id, amount, created_at) \
         SELECT '00000000-0000-4000-8000-0000000000e1', t.entry_id, t.account_id, 1, t.created_at FROM transactions t \
         WHERE t.reference_number = $1",
        &reference,
    )
    .await;
    assert_eq!(
        kinds(&kit).await,
        vec!["balance", "ledger_total", "unbalanced_entry"]
    );
    sql(
        &kit,
        "DELETE FROM postings WHERE id = $1",
        "00000000-0000-4000-8000-0000000000e1",
    )
    .await;

    // A posting to no account, balanced by one to the main account's internal side.
    sql(
        &kit,
        "INSERT INTO postings (id, entry_id, account_id, amount, created_at) \
         SELECT '00000000-0000-4000-8000-0000000000e2', t.entry_id, '00000000-0000-4000-8000-0000000000ff', 5, t.created_at FROM transactions t \
         WHERE t.reference_number = $1",
        &reference,
    )
    .await;
    assert!(kinds(&kit).await.contains(&"unknown_account"));
    sql(
        &kit,
        "DELETE FROM postings WHERE id = $1",
        "00000000-0000-4000-8000-0000000000e2",
    )
    .await;

    // The customer posting removed: a short entry, a transaction without its posting.
    sql(
        &kit,
        "DELETE FROM postings WHERE amount > 0 AND entry_id = \
         (SELECT entry_id FROM transactions WHERE reference_number = $1)",
        &reference,
    )
    .await;
    let found = kinds(&kit).await;
    for kind in ["short_entry", "transaction_without_posting", "balance"] {
        assert!(found.contains(&kind), "{kind} in {found:?}");
    }
}

on_both_stores!(every_kind_of_discrepancy_is_named);

/// The `missing_parent` discrepancies the checker finds, as `(row, what)`, sorted.
async fn missing_parents(kit: &TestKit) -> Vec<(String, String)> {
    let report = kobo::money::verify::verify(&kit.store).await.unwrap();
    let mut missing: Vec<(String, String)> = report
        .discrepancies
        .into_iter()
        .filter(|d| d.kind == "missing_parent")
        .map(|d| (d.subject, d.detail))
        .collect();
    missing.sort();
    missing
}

/// On PostgreSQL no foreign key checks the rows a payout writes (migration 0022): the checker
/// names a row whose parent is missing, or whose account is another business's.
#[tokio::test]
async fn a_row_without_its_parent_is_named() {
    let kit = TestKit::postgres().await;
    let token = kit.integration_token().await;
    let main = kit.business.main_account_number.clone();
    let credit = kit.credit(&token, &main, "100.00").await;
    let reference = credit["reference_number"].as_str().unwrap().to_owned();
    assert_eq!(kinds(&kit).await, Vec::<&str>::new());
    let (other, _) = kit.other_business("Other Ltd", "owner@other.test").await;

    // The credit's transaction moved to an account of another business (and so no longer
    // backed by its posting; its settlement is the transaction itself since migration 0023).
    let account = "SELECT account_id::text FROM transactions WHERE reference_number = $1";
    let own = kit.sql(account).bind(&reference).texts().await.remove(0);
    let theirs = kit
        .sql("SELECT id::text FROM accounts WHERE account_number = $1")
        .bind(&other.main_account_number)
        .texts()
        .await
        .remove(0);
    let move_to =
        "UPDATE transactions SET account_id = CAST($1 AS uuid) WHERE reference_number = $2";
    kit.sql(move_to)
        .bind(&theirs)
        .bind(&reference)
        .execute()
        .await;
    assert_eq!(
        missing_parents(&kit).await,
        vec![(
            reference.clone(),
            "transaction of no account of its business".to_owned()
        )]
    );
    kit.sql(move_to).bind(&own).bind(&reference).execute().await;
    assert_eq!(kinds(&kit).await, Vec::<&str>::new());

    // Its journal entry gone: its postings and its transaction name no entry.
    kit.sql(
        "DELETE FROM journal_entries WHERE id = \
         (SELECT entry_id FROM transactions WHERE reference_number = $1)",
    )
    .bind(&reference)
    .execute()
    .await;
    let mut missing: Vec<String> = missing_parents(&kit)
        .await
        .into_iter()
        .map(|(_, what)| what)
        .collect();
    missing.sort();
    assert_eq!(
        missing,
        vec![
            "posting of no journal entry",
            "posting of no journal entry",
            "transaction of no journal entry"
        ]
    );
}
