//! `kobo ledger verify` finds what does not add up: each kind of discrepancy, made on purpose
//! behind the ledger's back.

use kobo::kernel::store::Backend;
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

    // The customer posting removed: a short entry, a transaction without its posting. On
    // PostgreSQL the credit's transaction carries it (migration 0025).
    sql(
        &kit,
        "DELETE FROM postings WHERE amount > 0 AND entry_id = \
         (SELECT entry_id FROM transactions WHERE reference_number = $1)",
        &reference,
    )
    .await;
    if kit.store.backend() == Backend::Postgres {
        let carried = "UPDATE transactions SET carries_posting = false \
                       WHERE reference_number = $1 AND carries_posting";
        assert_eq!(kit.sql(carried).bind(&reference).execute().await, 1);
    }
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

    // Its journal entry gone: its postings and its transaction name no entry. The credit's
    // transaction carries the entry's row (migration 0025).
    let carried = "UPDATE transactions SET entry_kind = NULL \
                   WHERE reference_number = $1 AND entry_kind IS NOT NULL";
    assert_eq!(kit.sql(carried).bind(&reference).execute().await, 1);
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

/// On PostgreSQL a payout's postings to customer accounts and its entry's row are carried by
/// the transactions written with them (migration 0025): `postings` and `journal_entries` keep
/// only the internal accounts' postings and what no transaction carries, and the ledger's
/// views give each posting and each entry once.
#[tokio::test]
async fn a_payouts_customer_postings_and_entry_are_its_transactions() {
    let kit = TestKit::postgres().await;
    let token = kit.integration_token().await;
    let main = kit.business.main_account_number.clone();
    kit.credit(&token, &main, "100000.00").await;
    let (other, _) = kit
        .other_business("Lagos Fresh Produce Ltd", "owner@lagosfresh.ng")
        .await;
    let payout = async |to: &str, name: &str, bank: &str, amount: &str| -> String {
        let body = crate::support::payout_body(to, name, bank, amount);
        let path = generated_server::Operation::FundsTransferApi.path();
        let call = kobo::testkit::Call::new(path, Some(&token), body)
            .header("idempotency-key", format!("{to}-{amount}"));
        let reply = kit.send(call).await;
        let transfer = reply.expect(generated_server::ResponseCode::Success);
        transfer["reference_number"].as_str().unwrap().to_owned()
    };
    let intra = payout(
        &other.main_account_number,
        "Lagos Fresh Produce Ltd",
        "090823",
        "1234.56",
    )
    .await;
    let inter = payout("0123456788", "Emeka Nwosu", "000013", "2500").await;

    let entry = "(SELECT entry_id FROM transactions WHERE reference_number = $1)";
    let count = async |what: &str, reference: &str| -> i64 {
        kit.sql(&format!(
            "SELECT COUNT(*) FROM {what} WHERE entry_id = {entry}"
        ))
        .bind(reference)
        .int()
        .await
    };
    let entries = async |what: &str, reference: &str| -> i64 {
        kit.sql(&format!("SELECT COUNT(*) FROM {what} WHERE id = {entry}"))
            .bind(reference)
            .int()
            .await
    };
    // Intra-bank: the debit and the recipient's credit carry both postings and the entry.
    assert_eq!(count("postings", &intra).await, 0);
    assert_eq!(count("ledger_postings", &intra).await, 2);
    assert_eq!(count("transactions", &intra).await, 2);
    assert_eq!(entries("journal_entries", &intra).await, 0);
    assert_eq!(entries("ledger_entries", &intra).await, 1);
    let total = format!("SELECT SUM(amount)::bigint FROM ledger_postings WHERE entry_id = {entry}");
    assert_eq!(kit.sql(&total).bind(&intra).int().await, 0);
    // Inter-bank with a fee: the debit and the fee's transaction carry the customer's two
    // postings; NIP settlement's and the bank's income postings stay rows of `postings`.
    let customer = format!(
        "SELECT COUNT(*) FROM postings WHERE entry_id = {entry} \
         AND account_id IN (SELECT id FROM accounts)"
    );
    assert_eq!(kit.sql(&customer).bind(&inter).int().await, 0);
    assert_eq!(count("transactions", &inter).await, 2);
    assert!(count("postings", &inter).await >= 2);
    assert_eq!(
        count("ledger_postings", &inter).await,
        count("postings", &inter).await + 2
    );
    assert_eq!(entries("journal_entries", &inter).await, 0);
    assert_eq!(entries("ledger_entries", &inter).await, 1);
    assert_eq!(kit.sql(&total).bind(&inter).int().await, 0);

    let report = kit.assert_ledger_balances().await;
    assert_eq!(
        i64::try_from(report.journal_entries).unwrap(),
        kit.sql("SELECT COUNT(DISTINCT entry_id) FROM transactions")
            .int()
            .await
    );
}
