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
