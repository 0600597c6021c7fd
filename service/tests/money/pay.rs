//! `Tx::pay`, the store's one call for a payout's write, on both stores: it answers what the
//! movement did, makes the rows only for a movement that moved, and a refusal keeps nothing.

use chrono::{DateTime, Utc};
use kobo::datastore::accounts::{self, BalanceChange};
use kobo::datastore::batch::Batch;
use kobo::datastore::ledger::{self, AdvancedHead, Money};
use kobo::datastore::transactions::{self, NewTransaction};
use kobo::kernel::store::{Paid, Payment};
use kobo::testkit::{StoreKind, TestKit};

/// Moves `amount` kobo from account `from` to `to`, both of `business_id`, as a payout's write
/// does: the movement, then an entry made from the heads it returns. Returns what `pay`
/// answered, with the heads the maker was given.
async fn pay(
    kit: &TestKit,
    business_id: &str,
    (from, to): (&str, &str),
    amount: i64,
) -> Paid<Vec<AdvancedHead>> {
    let now: DateTime<Utc> = kobo::kernel::store::as_stored(kit.clock.now());
    let changes = [
        BalanceChange {
            account_id: from,
            amount: -amount,
            must_be_active: true,
        },
        BalanceChange {
            account_id: to,
            amount,
            must_be_active: true,
        },
    ];
    let money = Money {
        business_id,
        places: 2,
        // Nothing counted toward the daily limit: no transfer says it was sent.
        daily: None,
        default_daily_limit: 500_000_000,
        business_must_be_active: true,
        changes: &changes,
        max_balance: i64::MAX / 4,
    };
    let places = [(business_id, 2)];
    let payment = Payment {
        places: &places,
        now,
        money: &money,
        rows_only: false,
    };
    let mut tx = kit
        .store
        .begin_payout(&[business_id], Some(business_id))
        .await
        .unwrap();
    // Its entry and its two transactions, each at its place (a business paying itself takes
    // two): every change of a balance has its transaction, carrying the balance after it.
    let make = |heads: &[AdvancedHead]| {
        let head = heads
            .iter()
            .find(|head| head.business_id == business_id)
            .expect("the business's head");
        let micros = head
            .last_posted_micros
            .expect("a head with its microsecond clock");
        let place = |back: i64| {
            let at = DateTime::from_timestamp_micros(micros - back).expect("a time");
            (head.last_sequence - back, at)
        };
        let mut batch = Batch::new();
        let postings = [(from, -amount), (to, amount)];
        let entry_id =
            ledger::record_entry_into(&mut batch, business_id, "transfer", &postings, place(1).1);
        for (account_id, kind, (sequence, at)) in
            [(from, "debit", place(1)), (to, "credit", place(0))]
        {
            let new = NewTransaction {
                id: uuid::Uuid::new_v4(),
                business_id: business_id.to_owned(),
                account_id: account_id.to_owned(),
                entry_id: entry_id.clone(),
                sequence,
                reference_number: format!("TST-{}", uuid::Uuid::new_v4().simple()),
                transaction_type: kind.to_owned(),
                category: "transfer".to_owned(),
                status: "success".to_owned(),
                channel: "intra".to_owned(),
                amount,
                narration: "Tx::pay".to_owned(),
                session_id: None,
                originator: None,
                created_at: at,
                settled: false,
            };
            transactions::record_into(&mut batch, new);
        }
        Ok::<_, kobo::error::Error>((heads.to_vec(), batch))
    };
    let paid = tx.pay(&payment, make).await.unwrap();
    match &paid {
        Paid::Written(..) => tx.commit().await.unwrap(),
        _ => tx.rollback().await.unwrap(),
    }
    paid
}

async fn balance(kit: &TestKit, account_id: &str) -> i64 {
    accounts::find_by_id(&kit.store, account_id)
        .await
        .unwrap()
        .unwrap()
        .balance
}

async fn the_store_pays_in_one_call_or_refuses_and_keeps_nothing(kind: StoreKind) {
    let kit = TestKit::on(kind).await;
    let token = kit.integration_token().await;
    let to_number = kit.open_account(&token, "Payroll").await;
    kit.credit(&token, "1000000014", "1000").await;
    let business_id = kit.business.business_id.clone();
    let find = |number: String| {
        let store = kit.store.clone();
        async move {
            accounts::find_by_number_anywhere(&store, &number)
                .await
                .unwrap()
                .unwrap()
                .account
                .id
        }
    };
    let from = find("1000000014".to_owned()).await;
    let to = find(to_number).await;
    // More than the account holds: refused, no row made, nothing kept.
    let refused = pay(&kit, &business_id, (&from, &to), 100_001).await;
    let Paid::Refused(done) = refused else {
        panic!("an overdraft is refused: {refused:?}");
    };
    assert!(done.counted, "{done:?}");
    assert!(done.moved.len() < 2, "{done:?}");
    assert_eq!(balance(&kit, &from).await, 100_000);
    // Within the balance: written, its rows made once from the head as advanced.
    let written = pay(&kit, &business_id, (&from, &to), 40_000).await;
    let Paid::Written(heads, done) = written else {
        panic!("a payout within the balance is written: {written:?}");
    };
    assert_eq!(done.moved.len(), 2, "{done:?}");
    let head = heads
        .iter()
        .find(|head| head.business_id == business_id)
        .expect("the business's head");
    assert_eq!(balance(&kit, &from).await, 60_000);
    assert_eq!(balance(&kit, &to).await, 40_000);
    // The next one takes the next places: the refused one took none.
    let next = pay(&kit, &business_id, (&from, &to), 10_000).await;
    let Paid::Written(next_heads, _) = next else {
        panic!("the next payout is written: {next:?}");
    };
    let next_head = next_heads
        .iter()
        .find(|head| head.business_id == business_id)
        .expect("the business's head");
    assert_eq!(next_head.last_sequence, head.last_sequence + 2);
    kit.assert_ledger_balances().await;
}

kobo::on_both_stores!(kind: the_store_pays_in_one_call_or_refuses_and_keeps_nothing);
