//! Round trips through every module of the SQLite store, a batch of each write kind, and a
//! database written by the service's migrations (today's release) read back by this crate.

use chrono::{DateTime, Duration, Utc};
use kobo_store_sqlite::{
    accounts, approval_policies, audit, batch, businesses, customers, daily_totals, events,
    idempotency_keys, invitations, ledger, logs, members, notifications, otps, roles, seeding,
    sequences, sessions, throttles, transactions, transfers, webhook_endpoints, Conn, Store,
    StoreError,
};

/// A fresh, migrated store in a directory that lives as long as the guard.
async fn fresh() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::connect(&Store::sqlite_url_in(dir.path()).unwrap())
        .await
        .unwrap();
    store.migrate().await.unwrap();
    (dir, store)
}

fn at(text: &str) -> DateTime<Utc> {
    text.parse().unwrap()
}

fn id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// The internal account of sandbox NIP settlement (migration 0005).
const SETTLEMENT: &str = "00000000-0000-4000-8000-000000000001";

/// A business with its main account (`number`), a custom role and a first member.
struct Fixture {
    business: String,
    client_id: String,
    main: String,
    number: String,
    role: String,
    member: String,
}

async fn business(store: &Store, name: &str, number: &str) -> Fixture {
    let now = at("2026-11-02T09:00:00Z");
    let fixture = Fixture {
        business: id(),
        client_id: format!("kobo_test_{}", &id()[..8]),
        main: id(),
        number: number.to_owned(),
        role: id(),
        member: id(),
    };
    let mut tx = store.begin().await.unwrap();
    businesses::insert(
        &mut tx,
        &businesses::NewBusiness {
            id: &fixture.business,
            name,
            status: "active",
            client_id: &fixture.client_id,
            client_secret_hash: "hash",
        },
        now,
    )
    .await
    .unwrap();
    accounts::insert_main(&mut tx, &fixture.main, &fixture.business, number, name, now)
        .await
        .unwrap();
    roles::insert_custom(
        &mut tx,
        &fixture.role,
        &fixture.business,
        &roles::Definition {
            name: "Payer",
            name_key: "payer",
            description: "Pays",
            permission_codes: r#"["transfers.create"]"#,
        },
        now,
    )
    .await
    .unwrap();
    members::insert_first(
        &mut tx,
        &members::NewMember {
            id: &fixture.member,
            business_id: &fixture.business,
            email: "ada@example.com",
            first_name: "Ada",
            last_name: "Obi",
            role_id: &fixture.role,
        },
        Some("argon"),
        now,
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    fixture
}

#[tokio::test]
async fn businesses_round_trip() {
    let (_dir, store) = fresh().await;
    let f = business(&store, "Ada Stores", "1000000001").await;
    let found = businesses::find(&store, &f.client_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.id, f.business);
    assert_eq!(found.status, "active");
    assert_eq!(found.created_at, at("2026-11-02T09:00:00Z"));
    assert_eq!(businesses::list(&store).await.unwrap(), vec![found.clone()]);
    assert_eq!(
        businesses::name_of(&store, &f.business).await.unwrap(),
        "Ada Stores"
    );
    assert_eq!(businesses::status_of(&store, "nobody").await.unwrap(), None);
    assert_eq!(
        businesses::set_daily_transfer_limit(&store, &f.client_id, Some(5_000))
            .await
            .unwrap(),
        1
    );
    let mut tx = store.begin().await.unwrap();
    assert_eq!(
        businesses::locked_for_execution(&mut tx, &f.business, 9)
            .await
            .unwrap(),
        ("active".to_owned(), 5_000)
    );
    assert_eq!(
        businesses::client_id_of(&mut tx, &f.business)
            .await
            .unwrap(),
        f.client_id
    );
    businesses::lock(&mut tx, &f.business).await.unwrap();
    businesses::set_client_secret(
        &mut tx,
        &f.business,
        "new-hash",
        Some(&f.member),
        Utc::now(),
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    let credentials = businesses::credentials_of_client(&store, &f.client_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(credentials.client_secret_hash, "new-hash");
    assert_eq!(
        businesses::set_status(&store, &f.business, "inactive", Utc::now())
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        businesses::status_of(Conn::Pool(&store), &f.business)
            .await
            .unwrap()
            .as_deref(),
        Some("inactive")
    );
    // On a connection held by the caller too.
    let mut connection = store.pool().acquire().await.unwrap();
    assert_eq!(
        businesses::name_of(&mut *connection, &f.business)
            .await
            .unwrap(),
        "Ada Stores"
    );
}

#[tokio::test]
async fn accounts_customers_and_policies_round_trip() {
    let (_dir, store) = fresh().await;
    let f = business(&store, "Ada Stores", "1000000001").await;
    let other = business(&store, "Bola Foods", "1000000009").await;
    let customer = id();
    let current = id();
    let virtual_account = id();
    let mut tx = store.begin().await.unwrap();
    customers::insert(
        &mut tx,
        &customers::NewCustomer {
            id: &customer,
            business_id: &f.business,
            email: Some("c@example.com"),
            phone: None,
            bvn_hash: Some("bvn-hash"),
            nin_hash: None,
            verified_identities: r#"["bvn"]"#,
            verified_name: "Chi",
            metadata: "{}",
            created_at: at("2026-11-02T09:01:00Z"),
        },
    )
    .await
    .unwrap();
    for (account, number, kind, customer_id, minute) in [
        (&current, "1000000002", "current", None, 2),
        (
            &virtual_account,
            "1000000003",
            "virtual",
            Some(customer.as_str()),
            3,
        ),
    ] {
        accounts::insert(
            &mut tx,
            &accounts::NewAccount {
                id: account,
                business_id: &f.business,
                account_number: number,
                account_name: "Sub",
                account_type: kind,
                parent_account_id: &f.main,
                customer_id,
                created_at: at(&format!("2026-11-02T09:0{minute}:00Z")),
            },
        )
        .await
        .unwrap();
    }
    assert_eq!(
        customers::account_number_of(&mut tx, &f.business, customers::Identity::Bvn, "bvn-hash")
            .await
            .unwrap()
            .as_deref(),
        Some("1000000003")
    );
    assert_eq!(
        customers::account_number_of(&mut tx, &f.business, customers::Identity::Nin, "bvn-hash")
            .await
            .unwrap(),
        None
    );
    let facts = accounts::current_account_facts(&mut tx, &f.business)
        .await
        .unwrap();
    assert_eq!(facts.current_accounts, 1);
    assert_eq!(facts.main_account_id.as_deref(), Some(f.main.as_str()));
    assert_eq!(
        accounts::main_account(&mut tx, &f.business)
            .await
            .unwrap()
            .unwrap()
            .id,
        f.main
    );
    let changed = accounts::apply_balance_changes(
        &mut tx,
        &[
            accounts::BalanceChange {
                account_id: &f.main,
                amount: 10_000,
                must_be_active: false,
            },
            accounts::BalanceChange {
                account_id: &current,
                amount: -1,
                must_be_active: true,
            },
        ],
        1_000_000,
        at("2026-11-02T10:00:00Z"),
    )
    .await
    .unwrap();
    assert_eq!(changed, vec![f.main.clone()], "an overdraft is refused");
    assert_eq!(
        accounts::balance_and_status(&mut tx, &f.main)
            .await
            .unwrap(),
        Some((10_000, "active".to_owned()))
    );
    assert!(
        accounts::set_status(&mut tx, &current, "active", "inactive")
            .await
            .unwrap()
    );
    assert!(
        !accounts::set_status(&mut tx, &current, "active", "inactive")
            .await
            .unwrap()
    );
    assert_eq!(
        accounts::locked_status(&mut tx, &current)
            .await
            .unwrap()
            .as_deref(),
        Some("inactive")
    );
    assert_eq!(
        accounts::lock_by_number(&mut tx, "1000000002")
            .await
            .unwrap(),
        Some((current.clone(), f.business.clone()))
    );
    assert!(
        approval_policies::insert(&mut tx, &f.business, true, 500, Utc::now())
            .await
            .unwrap()
    );
    assert!(
        !approval_policies::insert(&mut tx, &f.business, true, 1, Utc::now())
            .await
            .unwrap()
    );
    assert!(
        approval_policies::update(&mut tx, &f.business, Some(700), None, Utc::now())
            .await
            .unwrap()
    );
    tx.commit().await.unwrap();

    let policy = approval_policies::find(&store, &f.business)
        .await
        .unwrap()
        .unwrap();
    assert!(policy.is_active);
    assert_eq!(policy.min_amount, 700);
    let contact = customers::contact(&store, &customer)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(contact.email.as_deref(), Some("c@example.com"));
    assert_eq!(contact.verified_identities, r#"["bvn"]"#);

    let row = accounts::find_by_id(&store, &virtual_account)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.parent_account_number.as_deref(), Some("1000000001"));
    assert_eq!(row.customer_id.as_deref(), Some(customer.as_str()));
    assert_eq!(row.created_at, at("2026-11-02T09:03:00Z"));
    assert_eq!(row.last_balance_update, None);
    let main = accounts::find_by_number_anywhere(&store, "1000000001")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(main.business_name, "Ada Stores");
    assert_eq!(main.account.balance, 10_000);
    assert_eq!(
        main.account.last_balance_update,
        Some(at("2026-11-02T10:00:00Z"))
    );
    assert_eq!(
        accounts::main_account_number(&store, &other.business)
            .await
            .unwrap()
            .as_deref(),
        Some("1000000009")
    );

    // Lists: newest first, filters, a keyset page after the first.
    let all = accounts::list(&store, &f.business, &Default::default(), None, 10)
        .await
        .unwrap();
    let numbers: Vec<_> = all.iter().map(|a| a.account_number.as_str()).collect();
    assert_eq!(numbers, ["1000000003", "1000000002", "1000000001"]);
    let page = accounts::list(&store, &f.business, &Default::default(), None, 1)
        .await
        .unwrap();
    assert_eq!(page.len(), 2, "one more than the page");
    let next = accounts::list(
        &store,
        &f.business,
        &Default::default(),
        Some(accounts_cursor(&page[0])),
        10,
    )
    .await
    .unwrap();
    assert_eq!(next.len(), 2);
    assert_eq!(next[0].account_number, "1000000002");
    let filtered = |filters: accounts::Filters| {
        let store = store.clone();
        let business = f.business.clone();
        async move {
            accounts::list(&store, &business, &filters, None, 10)
                .await
                .unwrap()
                .into_iter()
                .map(|a| a.account_number)
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(
        filtered(accounts::Filters {
            account_type: Some("normal".into()),
            ..Default::default()
        })
        .await,
        ["1000000002", "1000000001"]
    );
    assert_eq!(
        filtered(accounts::Filters {
            account_type: Some("savings".into()),
            ..Default::default()
        })
        .await,
        Vec::<String>::new()
    );
    assert_eq!(
        filtered(accounts::Filters {
            is_available: Some(false),
            ..Default::default()
        })
        .await,
        ["1000000002"]
    );
    assert_eq!(
        filtered(accounts::Filters {
            parent_account_number: Some("1000000001".into()),
            ..Default::default()
        })
        .await,
        ["1000000003"]
    );
    assert_eq!(
        filtered(accounts::Filters {
            account_class: Some("primary".into()),
            status: Some("active".into()),
            account_number: Some("1000000001".into()),
            ..Default::default()
        })
        .await,
        ["1000000001"]
    );

    let metrics = accounts::metrics(&store, &f.business, &Default::default())
        .await
        .unwrap();
    assert_eq!(
        (metrics.active, metrics.inactive, metrics.virtual_accounts),
        (2, 1, 1)
    );
    assert_eq!(metrics.balance, 10_000);
    let newest = accounts::metrics(
        &store,
        &f.business,
        &accounts::MetricsFilters {
            count: Some(1),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(newest.virtual_accounts, 1);
    assert_eq!(newest.active + newest.inactive, 1);

    let lookup = accounts::PayoutLookup {
        default_daily_limit: 42,
        business_id: &f.business,
        source: "1000000001",
        intra_beneficiary: Some("1000000009"),
        reference: Some("no transfer holds it"),
        key: None,
    };
    let reads = accounts::payout_reads(&store, &lookup).await.unwrap();
    assert_eq!(reads.len(), 2);
    assert!(reads.iter().all(|r| r.payer_name == "Ada Stores"
        && r.daily_limit == 42
        && r.policy_minimum == Some(700)
        && r.reference_owner.is_none()));
    assert!(accounts::activity(&store, &[], None, None)
        .await
        .unwrap()
        .is_empty());
}

fn accounts_cursor(row: &accounts::AccountRow) -> kobo_store::paging::Cursor {
    kobo_store::paging::Cursor {
        created_at: row.created_at,
        id: row.id.parse().unwrap(),
    }
}

/// A settled inbound credit of `amount` to `account`, through the batch.
async fn credit(store: &Store, f: &Fixture, account: &str, sequence: i64, amount: i64, when: &str) {
    let mut tx = store.begin().await.unwrap();
    let mut writes = batch::Batch::new();
    let entry = ledger::record_entry_into(
        &mut writes,
        &f.business,
        "inbound_credit",
        &[(SETTLEMENT, -amount), (account, amount)],
        at(when),
    );
    transactions::record_into(
        &mut writes,
        transactions::NewTransaction {
            id: uuid::Uuid::new_v4(),
            business_id: f.business.clone(),
            account_id: account.to_owned(),
            entry_id: entry,
            sequence,
            reference_number: format!("REF{sequence:06}"),
            transaction_type: "credit".into(),
            category: "collection".into(),
            status: "success".into(),
            channel: "nip".into(),
            amount,
            narration: format!("Payment {sequence}"),
            session_id: None,
            originator: Some(transactions::Originator {
                account_number: "0123456789".into(),
                account_name: "Payer".into(),
                bank_code: "000013".into(),
                bank_name: "GTBank".into(),
            }),
            created_at: at(when),
            settled: true,
        },
    );
    batch::run(&mut tx, writes).await.unwrap();
    accounts::apply_balance_changes(
        &mut tx,
        &[accounts::BalanceChange {
            account_id: account,
            amount,
            must_be_active: false,
        }],
        i64::MAX,
        at(when),
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
}

#[tokio::test]
async fn ledger_transactions_and_audit_round_trip() {
    let (_dir, store) = fresh().await;
    let f = business(&store, "Ada Stores", "1000000001").await;
    let mut tx = store.begin().await.unwrap();
    let heads = ledger::advance_heads(&mut tx, &[(&f.business, 3)], at("2026-11-02T10:00:00Z"))
        .await
        .unwrap();
    assert_eq!(heads[0].last_sequence, 3);
    let micros = at("2026-11-02T10:00:00Z").timestamp_micros();
    assert_eq!(heads[0].last_posted_micros, Some(micros + 2));
    let heads = ledger::advance_heads(&mut tx, &[(&f.business, 2)], at("2026-11-02T10:00:00Z"))
        .await
        .unwrap();
    assert_eq!(heads[0].last_sequence, 5);
    assert_eq!(heads[0].last_posted_micros, Some(micros + 4));
    ledger::set_head_time(&mut tx, &f.business, at("2026-11-02T11:00:00Z"))
        .await
        .unwrap();
    assert_eq!(sequences::next(&mut tx, "accounts").await.unwrap(), 1);
    assert_eq!(sequences::next(&mut tx, "accounts").await.unwrap(), 2);
    tx.commit().await.unwrap();

    for (sequence, minute) in [(1, 1), (2, 2), (3, 3)] {
        credit(
            &store,
            &f,
            &f.main,
            sequence,
            1_000 * sequence,
            &format!("2026-11-02T12:0{minute}:00Z"),
        )
        .await;
    }
    let window = |cursor, offset| transactions::Window {
        size: 2,
        cursor,
        offset,
    };
    let page = transactions::list(
        &store,
        transactions::Listing::Transactions,
        &f.business,
        &Default::default(),
        &window(None, None),
    )
    .await
    .unwrap();
    let references: Vec<_> = page.iter().map(|t| t.reference_number.as_str()).collect();
    assert_eq!(references, ["REF000003", "REF000002", "REF000001"]);
    assert_eq!(page[0].account_number, "1000000001");
    assert_eq!(page[0].originator_bank_name.as_deref(), Some("GTBank"));
    assert_eq!(page[0].created_at, at("2026-11-02T12:03:00Z"));
    let cursor = kobo_store::paging::Cursor {
        created_at: page[1].created_at,
        id: page[1].id,
    };
    for listing in [
        transactions::Listing::Transactions,
        transactions::Listing::Settlements,
    ] {
        for number in [None, Some("1000000001".to_owned())] {
            let filters = transactions::Filters {
                account_number: number,
                ..Default::default()
            };
            let after = transactions::list(
                &store,
                listing,
                &f.business,
                &filters,
                &window(Some(cursor.clone()), None),
            )
            .await
            .unwrap();
            assert_eq!(after.len(), 1, "{listing:?}");
            assert_eq!(after[0].reference_number, "REF000001");
        }
    }
    let searched = transactions::list(
        &store,
        transactions::Listing::Transactions,
        &f.business,
        &transactions::Filters {
            search: Some("PAYMENT 2".into()),
            from: Some(at("2026-11-02T00:00:00Z")),
            until: Some(at("2026-11-03T00:00:00Z")),
            status: Some("success".into()),
            channel: Some("nip".into()),
            ..Default::default()
        },
        &window(None, None),
    )
    .await
    .unwrap();
    assert_eq!(searched.len(), 1);
    assert_eq!(searched[0].reference_number, "REF000002");
    let offset = transactions::list(
        &store,
        transactions::Listing::Settlements,
        &f.business,
        &Default::default(),
        &window(None, Some(2)),
    )
    .await
    .unwrap();
    assert_eq!(offset.len(), 1);
    let elsewhere = transactions::list(
        &store,
        transactions::Listing::Transactions,
        &f.business,
        &transactions::Filters {
            account_number: Some("9999999999".into()),
            ..Default::default()
        },
        &window(None, None),
    )
    .await
    .unwrap();
    assert!(elsewhere.is_empty());

    let mut tx = store.begin().await.unwrap();
    let id = page[0].id.to_string();
    transactions::set_status(&mut tx, &id, "reversed")
        .await
        .unwrap();
    transactions::set_session_id(&mut tx, &id, "S1")
        .await
        .unwrap();
    tx.commit().await.unwrap();

    let activity = accounts::activity(
        &store,
        &[f.main.as_str()],
        Some(at("2026-11-02T12:02:00Z")),
        None,
    )
    .await
    .unwrap();
    let main = activity[&f.main];
    assert_eq!(main.collections, 1, "{main:?}");
    assert_eq!(main.collected, 2_000);
    assert_eq!(main.last_collection, Some(at("2026-11-02T12:02:00Z")));
    assert_eq!(main.transactions, 3);

    // The ledger verifies.
    assert_eq!(
        audit::count(&store, audit::Counted::JournalEntries)
            .await
            .unwrap(),
        3
    );
    assert_eq!(
        audit::count(&store, audit::Counted::Postings)
            .await
            .unwrap(),
        6
    );
    assert_eq!(
        audit::count(&store, audit::Counted::Transactions)
            .await
            .unwrap(),
        3
    );
    assert_eq!(
        audit::count(&store, audit::Counted::Accounts)
            .await
            .unwrap(),
        1
    );
    assert_eq!(audit::postings_total(&store).await.unwrap(), 0);
    assert!(audit::short_entries(&store).await.unwrap().is_empty());
    assert!(audit::unbalanced_entries(&store).await.unwrap().is_empty());
    assert!(audit::postings_to_unknown_accounts(&store)
        .await
        .unwrap()
        .is_empty());
    assert!(audit::transactions_without_posting(&store)
        .await
        .unwrap()
        .is_empty());
    assert!(audit::daily_totals_astray(&store).await.unwrap().is_empty());
    let balances = audit::account_balances(&store).await.unwrap();
    assert_eq!(balances.len(), 1);
    assert_eq!(balances[0].balance as i128, balances[0].posted);
    assert_eq!(balances[0].posted, 6_000);
}

/// A transfer to write, held for approval.
fn new_transfer(
    f: &Fixture,
    reference_number: &str,
    amount: i64,
    status: &str,
    debit: &str,
) -> transfers::NewTransfer {
    let now = at("2026-11-02T13:00:00Z");
    transfers::NewTransfer {
        row: transfers::TransferRow {
            id: id(),
            reference_number: reference_number.to_owned(),
            reference: Some(format!("client-{reference_number}")),
            amount,
            fee: 10,
            vat: 1,
            transfer_status: status.to_owned(),
            approval_status: if status == "pending_approval" {
                "awaiting_approval".into()
            } else {
                "not_required".into()
            },
            transfer_type: "inter".into(),
            source_account_number: f.number.clone(),
            beneficiary_account_number: "0123456789".into(),
            beneficiary_account_name: "Payee".into(),
            bank_code: "000013".into(),
            bank_name: "GTBank".into(),
            narration: "Rent".into(),
            session_id: None,
            failure_reason: None,
            reversal_reference_number: None,
            initiated_by: f.member.clone(),
            initiated_via: "dashboard".into(),
            reviewed_by: None,
            expires_at: Some(now + Duration::hours(1)),
            created_at: now,
            updated_at: now,
        },
        business_id: f.business.clone(),
        source_account_id: f.main.clone(),
        beneficiary_account_id: None,
        debit_transaction_id: Some(debit.to_owned()),
        fee_transaction_id: None,
        day: "2026-11-02".into(),
        credential_issued_by: None,
    }
}

/// A payout's journal entry and debit transaction, as writes of `writes`; returns the
/// transaction's id.
fn debit(writes: &mut batch::Batch, f: &Fixture, sequence: i64, amount: i64) -> String {
    let now = at("2026-11-02T13:00:00Z");
    let entry = ledger::record_entry_into(
        writes,
        &f.business,
        "transfer",
        &[
            (&f.main, -amount),
            ("00000000-0000-4000-8000-000000000002", amount),
        ],
        now,
    );
    let id = uuid::Uuid::new_v4();
    transactions::record_into(
        writes,
        transactions::NewTransaction {
            id,
            business_id: f.business.clone(),
            account_id: f.main.clone(),
            entry_id: entry,
            sequence,
            reference_number: format!("DEBIT{sequence}"),
            transaction_type: "debit".into(),
            category: "transfer".into(),
            status: "pending".into(),
            channel: "nip".into(),
            amount,
            narration: "Rent".into(),
            session_id: None,
            originator: None,
            created_at: now,
            settled: false,
        },
    );
    id.to_string()
}

#[tokio::test]
async fn transfers_and_daily_totals_round_trip() {
    let (_dir, store) = fresh().await;
    let f = business(&store, "Ada Stores", "1000000001").await;
    let mut tx = store.begin().await.unwrap();
    let mut writes = batch::Batch::new();
    let first = debit(&mut writes, &f, 1, 5_000);
    let second = debit(&mut writes, &f, 2, 7_000);
    let held = new_transfer(&f, "TRF1", 5_000, "pending_approval", &first);
    let sent = new_transfer(&f, "TRF2", 7_000, "processing", &second);
    transfers::insert_into(&mut writes, held.clone());
    transfers::insert_into(&mut writes, sent.clone());
    batch::run(&mut tx, writes).await.unwrap();
    assert!(
        daily_totals::add_within(&mut tx, &f.business, "2026-11-02", 7_000, 10_000)
            .await
            .unwrap()
    );
    assert!(
        !daily_totals::add_within(&mut tx, &f.business, "2026-11-02", 7_000, 10_000)
            .await
            .unwrap()
    );
    assert_eq!(
        daily_totals::spent(&mut tx, &f.business, "2026-11-02")
            .await
            .unwrap(),
        Some(7_000)
    );
    assert!(transfers::first_reserving(&mut tx, &f.main)
        .await
        .unwrap()
        .is_some());
    tx.commit().await.unwrap();
    assert!(audit::daily_totals_astray(&store).await.unwrap().is_empty());

    let found = transfers::find(&store, &f.business, transfers::Lookup::Id(&held.row.id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found, held.row);
    for lookup in [
        transfers::Lookup::ReferenceNumber("TRF2"),
        transfers::Lookup::Reference("client-TRF2"),
    ] {
        let found = transfers::find(&store, &f.business, lookup)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(found, sent.row);
    }
    assert_eq!(
        transfers::reference_owner(&store, &f.business, "client-TRF1")
            .await
            .unwrap()
            .as_deref(),
        Some("TRF1")
    );
    let listed = transfers::list(&store, &f.business, &Default::default(), None, 10)
        .await
        .unwrap();
    assert_eq!(listed.len(), 2);
    let filtered = transfers::list(
        &store,
        &f.business,
        &transfers::Filters {
            transfer_status: Some("processing".into()),
            source_account_number: Some("1000000001".into()),
            from: Some(at("2026-11-02T00:00:00Z")),
            until: Some(at("2026-11-03T00:00:00Z")),
            ..Default::default()
        },
        None,
        10,
    )
    .await
    .unwrap();
    assert_eq!(filtered, vec![sent.row.clone()]);
    assert_eq!(
        transfers::pending_references(&store, &f.business, Some("1000000001"), None, 10)
            .await
            .unwrap(),
        ["TRF1"]
    );
    let row = transfers::held(&store, &f.business, "TRF1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.amount, 5_000);
    assert_eq!(row.transfer_status, "pending_approval");
    assert_eq!(
        transfers::due_expiries(&store, at("2026-11-02T15:00:00Z"))
            .await
            .unwrap(),
        [(f.business.clone(), "TRF1".to_owned())]
    );

    let mut tx = store.begin().await.unwrap();
    let review = transfers::Review {
        from: "pending_approval",
        to: "processing",
        approval_status: "approved",
        reviewer: Some(&f.member),
        reason: None,
        day: Some("2026-11-03"),
        at: at("2026-11-02T14:00:00Z"),
    };
    assert!(transfers::review(&mut tx, &held.row.id, &review)
        .await
        .unwrap());
    assert!(!transfers::review(&mut tx, &held.row.id, &review)
        .await
        .unwrap());
    tx.commit().await.unwrap();

    let leased = transfers::lease_due(
        &store,
        at("2026-11-02T15:00:00Z"),
        at("2026-11-02T15:01:00Z"),
        10,
    )
    .await
    .unwrap();
    assert_eq!(leased.len(), 2);
    let rows = transfers::leased(&store, &leased).await.unwrap();
    assert_eq!(rows.len(), 2);
    assert!(rows
        .iter()
        .all(|r| !r.submitted && r.source_account_number == "1000000001"));
    transfers::wait(
        &store,
        &sent.row.id,
        true,
        at("2026-11-02T15:05:00Z"),
        Some("SESSION"),
        at("2026-11-02T15:00:00Z"),
    )
    .await
    .unwrap();
    let rows = transfers::leased(&store, std::slice::from_ref(&sent.row.id))
        .await
        .unwrap();
    assert!(rows[0].submitted);
    assert_eq!(rows[0].attempts, 1);
    // A worker whose lease ran out, not having submitted it, cannot unmark it.
    transfers::wait(
        &store,
        &sent.row.id,
        false,
        at("2026-11-02T15:06:00Z"),
        None,
        at("2026-11-02T15:01:00Z"),
    )
    .await
    .unwrap();
    let rows = transfers::leased(&store, std::slice::from_ref(&sent.row.id))
        .await
        .unwrap();
    assert!(rows[0].submitted);
    assert_eq!(rows[0].attempts, 2);

    let mut tx = store.begin().await.unwrap();
    assert!(
        transfers::decide(&mut tx, &sent.row.id, "processing", "failed", Utc::now())
            .await
            .unwrap()
    );
    transfers::set_session_id(&mut tx, &sent.row.id, "S2")
        .await
        .unwrap();
    transfers::set_reversal(&mut tx, &sent.row.id, "declined", "REV1", None)
        .await
        .unwrap();
    daily_totals::subtract_transfer(&mut tx, &sent.row.id)
        .await
        .unwrap();
    assert_eq!(
        daily_totals::spent(&mut tx, &f.business, "2026-11-02")
            .await
            .unwrap(),
        Some(0)
    );
    tx.commit().await.unwrap();
    let failed = transfers::find(&store, &f.business, transfers::Lookup::Id(&sent.row.id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(failed.transfer_status, "failed");
    assert_eq!(failed.session_id.as_deref(), Some("S2"));
    assert_eq!(failed.reversal_reference_number.as_deref(), Some("REV1"));
}

#[tokio::test]
async fn members_roles_invitations_and_sessions_round_trip() {
    let (_dir, store) = fresh().await;
    let f = business(&store, "Ada Stores", "1000000001").await;
    let invited = id();
    let built_in = id();
    let session = id();
    let mut tx = store.begin().await.unwrap();
    roles::upsert_built_in(
        &mut tx,
        &built_in,
        &roles::Definition {
            name: "Owner",
            name_key: "owner",
            description: "Everything",
            permission_codes: "[]",
        },
        "2026-11-01T00:00:00.000000Z",
    )
    .await
    .unwrap();
    assert!(
        members::email_taken(&mut tx, &f.business, "ada@example.com")
            .await
            .unwrap()
    );
    members::insert_invited(
        &mut tx,
        &members::NewMember {
            id: &invited,
            business_id: &f.business,
            email: "bola@example.com",
            first_name: "bola",
            last_name: "Ade",
            role_id: &built_in,
        },
        at("2026-11-02T10:00:00Z"),
    )
    .await
    .unwrap();
    invitations::insert(
        &mut tx,
        &invitations::NewInvitation {
            business_id: &f.business,
            member_id: &invited,
            token_hash: "token",
            expires_at: at("2026-11-09T10:00:00Z"),
        },
        at("2026-11-02T10:00:00Z"),
    )
    .await
    .unwrap();
    sessions::insert(
        &mut tx,
        &sessions::NewSession {
            id: &session,
            business_id: &f.business,
            family: "dashboard",
            member_id: Some(&f.member),
            ip_address: "10.0.0.1",
            created_at: at("2026-11-02T10:00:00Z"),
            expires_at: at("2026-11-02T11:00:00Z"),
        },
    )
    .await
    .unwrap();
    assert_eq!(
        roles::holder_of_name(&mut tx, &f.business, "owner")
            .await
            .unwrap(),
        Some(built_in.clone())
    );
    let grant = roles::find_grant(&mut tx, &f.business, &f.role)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(grant.name, "Payer");
    assert_eq!(
        roles::permission_codes_of(&mut tx, &f.role).await.unwrap(),
        r#"["transfers.create"]"#
    );
    roles::update_custom(
        &mut tx,
        &f.role,
        &f.business,
        &roles::Definition {
            name: "Payers",
            name_key: "payers",
            description: "Pay",
            permission_codes: "[]",
        },
        at("2026-11-02T10:30:00Z"),
    )
    .await
    .unwrap();
    assert_eq!(
        members::count_active_with_role(&mut tx, &f.business, &f.role, "nobody")
            .await
            .unwrap(),
        1
    );
    tx.commit().await.unwrap();

    let listed = roles::list_of_business(&store, &f.business).await.unwrap();
    let names: Vec<_> = listed.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["Owner", "Payers"]);
    assert!(listed[0].is_built_in);
    assert_eq!(listed[1].updated_at, at("2026-11-02T10:30:00Z"));
    assert_eq!(
        roles::find(&store, &f.business, &built_in)
            .await
            .unwrap()
            .unwrap()
            .id
            .to_string(),
        built_in
    );
    let custom = roles::custom_names(&store).await.unwrap();
    assert_eq!(custom.len(), 1);
    roles::set_name_key(&store, &f.role, "payers2")
        .await
        .unwrap();

    let invitation = invitations::find_by_token_hash(&store, "token")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(invitation.member_id, invited);
    assert_eq!(invitation.invitation_status, "pending");
    assert_eq!(invitation.client_id, f.client_id);
    assert_eq!(invitation.used_at, None);

    let member = members::find(&store, &f.business, &invited)
        .await
        .unwrap()
        .unwrap();
    assert!(!member.is_active);
    assert_eq!(
        member.invitation_expires_at,
        Some(at("2026-11-09T10:00:00Z"))
    );
    assert_eq!(member.role_name, "Owner");

    let list = |order, ascending| {
        let store = store.clone();
        let business = f.business.clone();
        async move {
            members::list(
                &store,
                &members::MemberFilter {
                    business_id: business,
                    order,
                    ascending,
                    page_size: 10,
                    ..Default::default()
                },
            )
            .await
            .unwrap()
            .into_iter()
            .map(|m| m.email)
            .collect::<Vec<_>>()
        }
    };
    let ada_first = ["ada@example.com", "bola@example.com"];
    let bola_first = ["bola@example.com", "ada@example.com"];
    assert_eq!(
        list(members::MemberOrder::DateJoined, false).await,
        bola_first
    );
    assert_eq!(
        list(members::MemberOrder::DateJoined, true).await,
        ada_first
    );
    assert_eq!(list(members::MemberOrder::Email, true).await, ada_first);
    assert_eq!(
        list(members::MemberOrder::FirstName, false).await,
        bola_first
    );
    assert_eq!(list(members::MemberOrder::LastName, true).await, bola_first);

    let mut tx = store.begin().await.unwrap();
    members::record_login(&mut tx, &f.member, at("2026-11-02T11:00:00Z"))
        .await
        .unwrap();
    tx.commit().await.unwrap();
    // Never logged in last, either way.
    assert_eq!(list(members::MemberOrder::LastLogin, true).await, ada_first);
    assert_eq!(
        list(members::MemberOrder::LastLogin, false).await,
        ada_first
    );
    let page = members::list(
        &store,
        &members::MemberFilter {
            business_id: f.business.clone(),
            is_active: Some(true),
            role_id: Some(f.role.clone()),
            joined_from: Some(at("2026-11-02T00:00:00Z")),
            joined_until: Some(at("2026-11-03T00:00:00Z")),
            offset: 0,
            page_size: 1,
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(page.len(), 1);
    assert_eq!(page[0].last_login, Some(at("2026-11-02T11:00:00Z")));

    let memberships = members::memberships(&store, "bola@example.com", "kobo_test_", None, 5)
        .await
        .unwrap();
    assert_eq!(memberships.len(), 1);
    assert!(members::memberships(
        &store,
        "bola@example.com",
        "kobo_live_",
        Some(&f.business),
        5
    )
    .await
    .unwrap()
    .is_empty());

    let mut tx = store.begin().await.unwrap();
    assert!(invitations::use_up(&mut tx, &invitation.id, Utc::now())
        .await
        .unwrap());
    assert!(!invitations::use_up(&mut tx, &invitation.id, Utc::now())
        .await
        .unwrap());
    assert_eq!(
        invitations::revoke_open_of_member(&mut tx, &invited, Utc::now())
            .await
            .unwrap(),
        0
    );
    assert!(
        members::accept_invitation(&mut tx, &invited, &f.business, "hash", Utc::now())
            .await
            .unwrap()
    );
    assert!(
        !members::accept_invitation(&mut tx, &invited, &f.business, "hash", Utc::now())
            .await
            .unwrap()
    );
    assert!(
        members::change_password(&mut tx, &invited, &f.business, "hash", "hash2", Utc::now())
            .await
            .unwrap()
    );
    members::set_role(&mut tx, &invited, &f.business, &f.role, Utc::now())
        .await
        .unwrap();
    members::set_active(&mut tx, &invited, &f.business, false, Utc::now())
        .await
        .unwrap();
    let standing = members::standing(&mut tx, &invited, &f.business)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(standing.role_id, f.role);
    assert!(!standing.is_active);
    assert_eq!(standing.invitation_status, "accepted");
    assert!(
        members::restore(&mut tx, &invited, &f.business, "hash3", Utc::now())
            .await
            .unwrap()
    );
    tx.commit().await.unwrap();
    assert_eq!(
        members::password_hash(&store, &invited, &f.business)
            .await
            .unwrap()
            .as_deref(),
        Some("hash3")
    );

    let authenticated = sessions::find_for_token(&store, &session)
        .await
        .unwrap()
        .unwrap();
    let profile = authenticated.profile.clone().unwrap();
    assert_eq!(profile.member.email, "ada@example.com");
    assert_eq!(profile.role.name, "Payers");
    assert_eq!(profile.business.client_id, f.client_id);
    assert_eq!(authenticated.family, "dashboard");
    let member = authenticated.member.unwrap();
    assert!(member.is_active);
    assert_eq!(member.permission_codes.as_deref(), Some("[]"));
    let mut tx = store.begin().await.unwrap();
    sessions::revoke(&mut tx, &session, &f.business, at("2026-11-02T10:10:00Z"))
        .await
        .unwrap();
    sessions::revoke_all_of_member(&mut tx, &f.member, Utc::now())
        .await
        .unwrap();
    sessions::revoke_integration_of_business(&mut tx, &f.business, Utc::now())
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let revoked = sessions::find_for_token(&store, &session)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(revoked.revoked_at, Some(at("2026-11-02T10:10:00Z")));
    assert_eq!(
        sessions::purge_finished(&store, at("2026-11-03T00:00:00Z"))
            .await
            .unwrap(),
        1
    );
}

#[tokio::test]
async fn otps_throttles_keys_and_notifications_round_trip() {
    let (_dir, store) = fresh().await;
    let f = business(&store, "Ada Stores", "1000000001").await;
    let now = at("2026-11-02T10:00:00Z");
    let otp = id();
    let mut tx = store.begin().await.unwrap();
    otps::insert(
        &mut tx,
        &otps::NewOtp {
            id: &otp,
            business_id: &f.business,
            member_id: &f.member,
            code_hash: "code",
            expires_at: now + Duration::minutes(10),
            created_at: now,
        },
    )
    .await
    .unwrap();
    let issued = otps::issued_since(&mut tx, &f.member, now - Duration::hours(1))
        .await
        .unwrap();
    assert_eq!(issued.count, 1);
    assert_eq!(issued.oldest, Some(now));
    let attempted = otps::count_attempt(&mut tx, &f.member, now, 3)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(attempted.id, otp);
    assert_eq!(attempted.attempts, 1);
    assert!(otps::use_up(&mut tx, &otp, now).await.unwrap());
    assert!(!otps::use_up(&mut tx, &otp, now).await.unwrap());
    otps::use_up_all_of_member(&mut tx, &f.member, now)
        .await
        .unwrap();
    assert_eq!(
        otps::count_attempt(&mut tx, &f.member, now, 3)
            .await
            .unwrap(),
        None
    );

    assert_eq!(
        throttles::count_attempt(&mut tx, "login:ada", now, now - Duration::minutes(15))
            .await
            .unwrap(),
        Some(1)
    );
    assert_eq!(
        throttles::count_attempt(&mut tx, "login:ada", now, now - Duration::minutes(15))
            .await
            .unwrap(),
        Some(2)
    );
    throttles::lock(&mut tx, "login:ada", now + Duration::minutes(5))
        .await
        .unwrap();
    assert_eq!(
        throttles::count_attempt(&mut tx, "login:ada", now, now - Duration::minutes(15))
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        throttles::locked_until(&mut tx, "login:ada").await.unwrap(),
        Some(now + Duration::minutes(5))
    );
    throttles::give_back(&mut tx, "login:ada", 5).await.unwrap();
    assert_eq!(
        throttles::locked_until(&mut tx, "login:ada").await.unwrap(),
        None
    );
    throttles::give_back(&mut tx, "login:ada", 5).await.unwrap();
    throttles::delete_if_spent(&mut tx, "login:ada")
        .await
        .unwrap();
    throttles::count_attempt(&mut tx, "cred", now, now)
        .await
        .unwrap();
    throttles::count_attempt(&mut tx, "cred:10.0.0.1", now, now)
        .await
        .unwrap();
    throttles::delete_credential(&mut tx, "cred", "cred:")
        .await
        .unwrap();
    throttles::count_attempt(&mut tx, "other", now, now)
        .await
        .unwrap();
    throttles::delete(&mut tx, "other").await.unwrap();
    throttles::count_attempt(&mut tx, "stale", now, now)
        .await
        .unwrap();
    throttles::remember_address(&mut tx, "cred", "10.0.0.1", now)
        .await
        .unwrap();
    throttles::remember_address(&mut tx, "cred", "10.0.0.1", now)
        .await
        .unwrap();

    let key = idempotency_keys::KeyOf {
        business_id: &f.business,
        operation: "create_transfer",
        key: "k1",
    };
    assert!(
        idempotency_keys::claim(&mut tx, &key, "h1", now, now - Duration::hours(24))
            .await
            .unwrap()
    );
    assert!(
        !idempotency_keys::claim(&mut tx, &key, "h2", now, now - Duration::hours(24))
            .await
            .unwrap()
    );
    idempotency_keys::store_refusal(&mut tx, &key, "01", "no")
        .await
        .unwrap();
    let notification = notifications::insert(
        &mut tx,
        &notifications::NewNotification {
            business_id: Some(&f.business),
            channel: "email",
            recipient: "ada@example.com",
            subject: "Hello",
            body: "Body",
        },
        now,
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();

    assert_eq!(
        otps::purge_expired(&store, now + Duration::hours(1))
            .await
            .unwrap(),
        1
    );
    assert!(throttles::is_known_address(&store, "cred", "10.0.0.1")
        .await
        .unwrap());
    assert!(!throttles::is_known_address(&store, "cred", "10.0.0.2")
        .await
        .unwrap());
    assert_eq!(
        throttles::purge_expired(&store, now + Duration::hours(1))
            .await
            .unwrap(),
        1,
        "only `stale` was left"
    );
    assert_eq!(
        throttles::purge_known_addresses(&store, now + Duration::days(1))
            .await
            .unwrap(),
        1
    );

    let stored = idempotency_keys::find_unexpired(&store, &key, now - Duration::hours(1))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.request_hash, "h1");
    assert_eq!(stored.refusal_code.as_deref(), Some("01"));
    assert_eq!(
        idempotency_keys::purge_expired(&store, now + Duration::seconds(1))
            .await
            .unwrap(),
        1
    );

    let due = notifications::due(&store, "email", 5, now, 10)
        .await
        .unwrap();
    assert_eq!(due.len(), 1);
    assert_eq!(due[0].id, notification);
    assert_eq!(due[0].created_at, now);
    assert!(
        notifications::claim(&store, &notification, now + Duration::minutes(1), now)
            .await
            .unwrap()
    );
    assert!(
        !notifications::claim(&store, &notification, now + Duration::minutes(1), now)
            .await
            .unwrap()
    );
    notifications::mark_failed(&store, &notification, 1, "smtp down", Some(now))
        .await
        .unwrap();
    let unsent = notifications::unsent(&store, 5).await.unwrap();
    assert_eq!(unsent.count, 1);
    assert_eq!(unsent.oldest_created_at, Some(now));
    notifications::mark_sent(&store, &notification, now + Duration::minutes(2))
        .await
        .unwrap();
    let recent = notifications::recent(&store, 5).await.unwrap();
    assert_eq!(recent[0].sent_at, Some(now + Duration::minutes(2)));
    assert_eq!(recent[0].attempts, 2);
    assert_eq!(recent[0].last_error, None);
    assert_eq!(notifications::unsent(&store, 5).await.unwrap().count, 0);
}

#[tokio::test]
async fn webhooks_events_and_logs_round_trip() {
    let (_dir, store) = fresh().await;
    let f = business(&store, "Ada Stores", "1000000001").await;
    let now = at("2026-11-02T10:00:00Z");
    let endpoint = id();
    let ips = vec!["10.0.0.0/8".to_owned()];
    let kinds = vec!["transfer.success".to_owned()];

    // Before an endpoint, events are skipped.
    let mut tx = store.begin().await.unwrap();
    let mut writes = batch::Batch::new();
    let skipped = events::record_into(
        &mut writes,
        &f.business,
        "transfer.success",
        "{}".into(),
        now,
    );
    batch::run(&mut tx, writes).await.unwrap();
    assert!(webhook_endpoints::insert(
        &mut tx,
        &webhook_endpoints::NewEndpoint {
            id: &endpoint,
            business_id: &f.business,
            url: "https://example.com/hook",
            ip_whitelist: &ips,
            event_types: &kinds,
            secret: "whsec_1",
        },
        now,
    )
    .await
    .unwrap());
    assert_eq!(
        webhook_endpoints::id_of(&mut tx, &f.business)
            .await
            .unwrap(),
        endpoint
    );
    let mut writes = batch::Batch::new();
    let queued = events::record_into(
        &mut writes,
        &f.business,
        "transfer.success",
        r#"{"a":1}"#.into(),
        now + Duration::seconds(1),
    );
    batch::run(&mut tx, writes).await.unwrap();
    tx.commit().await.unwrap();

    let configuration = webhook_endpoints::find(&store, &f.business)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(configuration.id.to_string(), endpoint);
    assert_eq!(configuration.ip_whitelist, ips);
    assert!(configuration.is_active);
    let delivery = events::find_delivery(&store, &f.business, &skipped, now)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(delivery.delivery_status, "skipped");
    let delivery = events::find_delivery(&store, &f.business, &queued, now)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(delivery.delivery_status, "pending");
    assert_eq!(delivery.next_attempt_at, Some(now + Duration::seconds(1)));
    assert_eq!(delivery.payload, r#"{"a":1}"#);
    let pending = events::pending(&store).await.unwrap();
    assert_eq!(pending.count, 1);
    let later = now + Duration::minutes(1);
    assert!(!events::any_due_unconfigured(&store, later).await.unwrap());
    let due = events::due(&store, later, 5, 10).await.unwrap();
    assert_eq!(due.len(), 1);
    assert_eq!(due[0].id, queued);
    let lease = later + Duration::minutes(1);
    let claimed = events::claim(&store, &[queued.as_str(), "nobody"], lease, later)
        .await
        .unwrap();
    assert_eq!(claimed, std::slice::from_ref(&queued));
    let to_send = events::to_send(&store, &queued).await.unwrap();
    assert_eq!(to_send.kind, "transfer.success");
    assert_eq!(to_send.created_at, now + Duration::seconds(1));
    let attempt = events::AttemptMade {
        url: "https://example.com/hook",
        response_status: Some(500),
        error: Some("server error"),
        latency_ms: 12,
        response_body: Some("oops"),
    };
    let mut tx = store.begin().await.unwrap();
    events::record_attempt(&mut tx, &queued, later, &attempt)
        .await
        .unwrap();
    assert!(
        events::finish_attempt(&mut tx, &queued, lease, "failed", None, later, &attempt)
            .await
            .unwrap()
    );
    assert!(
        !events::finish_attempt(&mut tx, &queued, lease, "failed", None, later, &attempt)
            .await
            .unwrap()
    );
    assert!(events::requeue(&mut tx, &queued, &f.business, later)
        .await
        .unwrap());
    tx.commit().await.unwrap();
    events::settle(
        &store,
        &queued,
        later,
        "pending",
        Some(lease),
        Some("retry"),
    )
    .await
    .unwrap();
    let attempts = events::newest_attempts(&store, std::slice::from_ref(&queued), 5)
        .await
        .unwrap();
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0].response_status, Some(500));
    assert_eq!(attempts[0].attempted_at, later);
    let listed = events::list_deliveries(
        &store,
        &events::DeliveryFilter {
            business_id: f.business.clone(),
            since: now - Duration::days(30),
            from: None,
            until: None,
            delivery_status: None,
            kind: Some("transfer.success".into()),
            cursor: None,
            page_size: 10,
        },
    )
    .await
    .unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0].id, queued);
    assert_eq!(listed[0].attempts, 1);
    assert_eq!(listed[0].last_error.as_deref(), Some("retry"));
    let after = events::list_deliveries(
        &store,
        &events::DeliveryFilter {
            business_id: f.business.clone(),
            since: now - Duration::days(30),
            from: Some(now - Duration::days(1)),
            until: Some(now + Duration::days(1)),
            delivery_status: Some("skipped".into()),
            kind: None,
            cursor: Some(kobo_store::paging::Cursor {
                created_at: listed[0].created_at,
                id: listed[0].id.parse().unwrap(),
            }),
            page_size: 10,
        },
    )
    .await
    .unwrap();
    assert_eq!(after.len(), 1);
    assert_eq!(after[0].id, skipped);

    let mut tx = store.begin().await.unwrap();
    assert!(webhook_endpoints::update(
        &mut tx,
        &f.business,
        &webhook_endpoints::Change {
            is_active: Some(false),
            event_types: Some(&[]),
            ..Default::default()
        },
        later,
    )
    .await
    .unwrap());
    assert!(
        webhook_endpoints::rotate_secret(&mut tx, &f.business, "whsec_2", lease, later)
            .await
            .unwrap()
    );
    tx.commit().await.unwrap();
    let endpoint = webhook_endpoints::find_endpoint(&store, &f.business)
        .await
        .unwrap()
        .unwrap();
    assert!(!endpoint.is_active);
    assert!(endpoint.event_types.is_empty());
    assert_eq!(endpoint.secret, "whsec_2");
    assert_eq!(endpoint.previous_secret.as_deref(), Some("whsec_1"));
    assert_eq!(endpoint.previous_secret_expires_at, Some(lease));
    assert!(events::any_due_unconfigured(&store, lease).await.unwrap());
    let _turn = store.write_turn().await;
    assert_eq!(
        events::skip_due_unconfigured(&store, lease).await.unwrap(),
        1
    );
    drop(_turn);
    let mut tx = store.begin().await.unwrap();
    events::skip_pending_of_business(&mut tx, &f.business)
        .await
        .unwrap();
    events::purge_attempts(&mut tx, now + Duration::days(1))
        .await
        .unwrap();
    assert_eq!(
        events::purge(&mut tx, now + Duration::days(1))
            .await
            .unwrap(),
        2
    );
    tx.commit().await.unwrap();
    assert!(events::newest_attempts(&store, &[queued], 5)
        .await
        .unwrap()
        .is_empty());

    // Logs.
    let activities = [
        logs::Activity {
            business_id: f.business.clone(),
            endpoint: "/v1/transfers",
            http_status: 200,
            success: true,
            message: "Transfer \"queued\"".into(),
            ip_address: "10.0.0.1".into(),
            request_id: "r1".into(),
        },
        logs::Activity {
            business_id: f.business.clone(),
            endpoint: "/v1/accounts",
            http_status: 400,
            success: false,
            message: "Bad_request 100%".into(),
            ip_address: "10.0.0.2".into(),
            request_id: "r2".into(),
        },
    ];
    logs::record_activities(
        &store,
        &[
            (now, &activities[0]),
            (now + Duration::seconds(1), &activities[1]),
        ],
    )
    .await
    .unwrap();
    let filter = |search: Option<&str>, status: Option<&str>| logs::ActivityFilter {
        business_id: f.business.clone(),
        search: search.map(str::to_owned),
        status: status.map(str::to_owned),
        page_size: 10,
        ..Default::default()
    };
    let entries = logs::list_activity(&store, &filter(None, None))
        .await
        .unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0].endpoint, "/v1/accounts");
    assert_eq!(entries[0].response_code, 400);
    assert_eq!(entries[0].status, "error");
    assert_eq!(entries[1].message, "Transfer \"queued\"");
    assert_eq!(entries[1].method, "POST");
    assert_eq!(entries[1].created_at, now);
    let searched = logs::list_activity(&store, &filter(Some("D_REQUEST 100%"), None))
        .await
        .unwrap();
    assert_eq!(searched.len(), 1);
    let none = logs::list_activity(&store, &filter(Some("bad request"), None))
        .await
        .unwrap();
    assert!(none.is_empty(), "`_` is no wildcard");
    let successes = logs::list_activity(&store, &filter(None, Some("success")))
        .await
        .unwrap();
    assert_eq!(successes.len(), 1);
    let next = logs::list_activity(
        &store,
        &logs::ActivityFilter {
            cursor: Some(kobo_store::paging::Cursor {
                created_at: entries[0].created_at,
                id: entries[0].id,
            }),
            ..filter(None, None)
        },
    )
    .await
    .unwrap();
    assert_eq!(next, entries[1..]);

    let mut tx = store.begin().await.unwrap();
    let mut writes = batch::Batch::new();
    logs::audit_into(
        &mut writes,
        now,
        logs::NewAuditEntry {
            business_id: f.business.clone(),
            action: "transfer.create".into(),
            user_name: "Ada Obi".into(),
            user_id: Some(f.member.clone()),
            ip_address: "10.0.0.1".into(),
            response_code: 200,
            target_type: Some("transfer"),
            target_id: Some("TRF1".into()),
            request_id: "r3".into(),
        },
    );
    batch::run(&mut tx, writes).await.unwrap();
    tx.commit().await.unwrap();
    let audit = logs::list_audit(
        &store,
        &logs::AuditFilter {
            business_id: f.business.clone(),
            user_id: Some(f.member.clone()),
            search: Some("ADA".into()),
            from: Some(now),
            until: Some(now + Duration::days(1)),
            page_size: 10,
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0].day, "2026-11-02");
    assert_eq!(audit[0].target_type.as_deref(), Some("transfer"));
    assert_eq!(audit[0].created_at, now);
}

/// One batch of each write kind runs in order, and reads back.
#[tokio::test]
async fn a_batch_of_every_write_kind_runs_in_order() {
    let (_dir, store) = fresh().await;
    let f = business(&store, "Ada Stores", "1000000001").await;
    let now = at("2026-11-02T10:00:00Z");
    let key = idempotency_keys::KeyOf {
        business_id: &f.business,
        operation: "create_transfer",
        key: "k1",
    };
    let mut tx = store.begin().await.unwrap();
    idempotency_keys::claim(&mut tx, &key, "hash", now, now - Duration::hours(24))
        .await
        .unwrap();
    let transaction = uuid::Uuid::new_v4();
    let transfer = new_transfer(&f, "TRF9", 900, "processing", &transaction.to_string());
    let mut writes = batch::Batch::new();
    // The entry first: the transaction references it.
    let entry = ledger::record_entry_into(
        &mut writes,
        &f.business,
        "transfer",
        &[
            (&f.main, -900),
            ("00000000-0000-4000-8000-000000000002", 900),
        ],
        now,
    );
    transactions::record_into(
        &mut writes,
        transactions::NewTransaction {
            id: transaction,
            business_id: f.business.clone(),
            account_id: f.main.clone(),
            entry_id: entry,
            sequence: 1,
            reference_number: "TRF9".into(),
            transaction_type: "debit".into(),
            category: "transfer".into(),
            status: "pending".into(),
            channel: "nip".into(),
            amount: 900,
            narration: "Rent".into(),
            session_id: None,
            originator: None,
            created_at: now,
            settled: false,
        },
    );
    transfers::insert_into(&mut writes, transfer.clone());
    let event = events::record_into(
        &mut writes,
        &f.business,
        "transfer.processing",
        "{}".into(),
        now,
    );
    logs::audit_into(
        &mut writes,
        now,
        logs::NewAuditEntry {
            business_id: f.business.clone(),
            action: "transfer.create".into(),
            user_name: "Ada".into(),
            user_id: None,
            ip_address: "10.0.0.1".into(),
            response_code: 200,
            target_type: None,
            target_id: None,
            request_id: "r".into(),
        },
    );
    idempotency_keys::complete_into(&mut writes, &key, r#"{"ok":true}"#.into());
    assert_eq!(writes.len(), 6);
    batch::run(&mut tx, writes).await.unwrap();
    tx.commit().await.unwrap();

    assert_eq!(audit::postings_total(&store).await.unwrap(), 0);
    assert_eq!(
        audit::count(&store, audit::Counted::Postings)
            .await
            .unwrap(),
        2
    );
    assert!(audit::transactions_without_posting(&store)
        .await
        .unwrap()
        .is_empty());
    let listed = transactions::list(
        &store,
        transactions::Listing::Transactions,
        &f.business,
        &Default::default(),
        &transactions::Window {
            size: 10,
            cursor: None,
            offset: None,
        },
    )
    .await
    .unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, transaction);
    assert_eq!(listed[0].originator_account_name, None);
    let settlements = transactions::list(
        &store,
        transactions::Listing::Settlements,
        &f.business,
        &Default::default(),
        &transactions::Window {
            size: 10,
            cursor: None,
            offset: None,
        },
    )
    .await
    .unwrap();
    assert!(settlements.is_empty(), "a debit is no settlement");
    let row = transfers::find(
        &store,
        &f.business,
        transfers::Lookup::ReferenceNumber("TRF9"),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(row, transfer.row);
    let held = transfers::held(&store, &f.business, "TRF9")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(held.debit_transaction_id, Some(transaction.to_string()));
    assert_eq!(held.fee_transaction_id, None);
    let delivery = events::find_delivery(&store, &f.business, &event, now)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(delivery.delivery_status, "skipped");
    let audit = logs::list_audit(
        &store,
        &logs::AuditFilter {
            business_id: f.business.clone(),
            page_size: 10,
            ..Default::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(audit.len(), 1);
    let answer = idempotency_keys::find_unexpired(&store, &key, now - Duration::hours(1))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(answer.response_data.as_deref(), Some(r#"{"ok":true}"#));

    // Every time is stored in the release's fixed-width text, so text order is time order.
    let stored: Vec<String> = sqlx::query_scalar(
        "SELECT created_at FROM transfers UNION ALL SELECT created_at FROM transactions \
         UNION ALL SELECT created_at FROM events UNION ALL SELECT created_at FROM audit_logs \
         UNION ALL SELECT created_at FROM journal_entries UNION ALL SELECT created_at FROM postings",
    )
    .fetch_all(store.pool())
    .await
    .unwrap();
    assert_eq!(stored.len(), 7);
    assert!(
        stored
            .iter()
            .all(|text| text == "2026-11-02T13:00:00.000000Z"
                || text == "2026-11-02T10:00:00.000000Z"),
        "{stored:?}"
    );

    // A batch that fails writes nothing: its transaction rolls back.
    let mut tx = store.begin().await.unwrap();
    let mut writes = batch::Batch::new();
    events::record_into(&mut writes, &f.business, "x", "{}".into(), now);
    transfers::insert_into(&mut writes, transfer.clone());
    let error = batch::run(&mut tx, writes).await.unwrap_err();
    assert!(error.is_conflict(), "{error:?}");
    drop(tx);
    let events = events::list_deliveries(
        &store,
        &events::DeliveryFilter {
            business_id: f.business.clone(),
            since: now - Duration::days(1),
            from: None,
            until: None,
            delivery_status: None,
            kind: None,
            cursor: None,
            page_size: 10,
        },
    )
    .await
    .unwrap();
    assert_eq!(events.len(), 1);
}

#[tokio::test]
async fn seeding_loads_credits_in_bulk() {
    let (_dir, store) = fresh().await;
    let f = business(&store, "Ada Stores", "1000000001").await;
    assert!(!seeding::any_posting_to(&store, [&f.main, "a", "b", "c"])
        .await
        .unwrap());
    let start = at("2026-11-02T00:00:00Z");
    let mut rows = seeding::SeedRows::with_capacity(1_500);
    for n in 0..1_500_i64 {
        rows.push(&seeding::SeededCredit {
            business_id: &f.business,
            account_id: &f.main,
            settlement_account_id: SETTLEMENT,
            entry_id: id(),
            posting_ids: [id(), id()],
            id: id(),
            sequence: n + 1,
            reference: format!("SEED{n:06}"),
            narration: "Seeded".into(),
            amount: 100,
            balance_after: 100 * (n + 1),
            at: start + Duration::seconds(n),
        });
    }
    let mut tx = store.begin().await.unwrap();
    rows.insert(&mut tx).await.unwrap();
    assert_eq!(
        seeding::add_to_balance(&mut tx, &f.main, 150_000, start, i64::MAX)
            .await
            .unwrap(),
        Some(150_000)
    );
    assert_eq!(
        seeding::add_to_balance(&mut tx, &f.main, 1, start, 150_000)
            .await
            .unwrap(),
        None
    );
    tx.commit().await.unwrap();
    seeding::analyze_transactions(&store).await.unwrap();
    assert!(seeding::any_posting_to(&store, ["a", "b", &f.main, "c"])
        .await
        .unwrap());
    assert_eq!(
        seeding::business_of_account(&store, "1000000001")
            .await
            .unwrap(),
        Some(f.business.clone())
    );
    assert_eq!(
        seeding::active_accounts_by_balance(&store, &f.business)
            .await
            .unwrap(),
        ["1000000001"]
    );
    assert_eq!(
        audit::count(&store, audit::Counted::Transactions)
            .await
            .unwrap(),
        1_500
    );
    assert_eq!(audit::postings_total(&store).await.unwrap(), 0);
    let balances = audit::account_balances(&store).await.unwrap();
    assert_eq!(balances[0].posted, 150_000);
    let newest = transactions::list(
        &store,
        transactions::Listing::Settlements,
        &f.business,
        &transactions::Filters {
            account_number: Some("1000000001".into()),
            search: Some("seed001499".into()),
            ..Default::default()
        },
        &transactions::Window {
            size: 5,
            cursor: None,
            offset: None,
        },
    )
    .await
    .unwrap();
    assert_eq!(newest.len(), 1);
    assert_eq!(newest[0].created_at, start + Duration::seconds(1_499));
    assert_eq!(newest[0].originator_bank_code.as_deref(), Some("000013"));
}

/// The migrations as release 2.3.0 embedded them: this store's, unchanged since (the service's
/// upgrade test loads that release's databases themselves).
static RELEASED: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// Rows as today's release writes them (fixed-width RFC 3339 text times, SMALLINT flags, UUID
/// text ids), for [`a_database_of_todays_release_reads_back_unchanged`].
const RELEASED_ROWS: &str = r#"
INSERT INTO businesses (id, name, status, client_id, client_secret_hash, created_at, updated_at,
  daily_transfer_limit, secret_issued_by)
VALUES ('11111111-1111-4111-8111-111111111111', 'Old Bank Ltd', 'active', 'kobo_test_old',
  'secret-hash', '2026-10-01T08:00:00.000000Z', '2026-10-01T08:00:00.000000Z', 900000, NULL);
INSERT INTO roles (id, business_id, name, name_key, description, permission_codes, is_built_in,
  created_at, updated_at)
VALUES ('22222222-2222-4222-8222-222222222222', NULL, 'Owner', 'owner', 'Everything',
  '["transfers.create","transfers.approve"]', 1, '2026-10-01T00:00:00.000000Z',
  '2026-10-01T00:00:00.000000Z');
INSERT INTO members (id, business_id, email, first_name, last_name, role_id, password_hash,
  is_active, invitation_status, last_login, date_joined, created_at, updated_at)
VALUES ('33333333-3333-4333-8333-333333333333', '11111111-1111-4111-8111-111111111111',
  'owner@old.example', 'Olu', 'Wale', '22222222-2222-4222-8222-222222222222', 'argon2id$x', 1,
  'accepted', '2026-10-02T09:30:00.123456Z', '2026-10-01T08:00:00.000000Z',
  '2026-10-01T08:00:00.000000Z', '2026-10-01T08:00:00.000000Z'),
  ('44444444-4444-4444-8444-444444444444', '11111111-1111-4111-8111-111111111111',
  'checker@old.example', 'Chi', 'Eze', '22222222-2222-4222-8222-222222222222', NULL, 0,
  'pending', NULL, '2026-10-03T08:00:00.000000Z', '2026-10-03T08:00:00.000000Z',
  '2026-10-03T08:00:00.000000Z');
INSERT INTO invitations (id, business_id, member_id, token_hash, expires_at, used_at, revoked_at,
  created_at)
VALUES ('55555555-5555-4555-8555-555555555555', '11111111-1111-4111-8111-111111111111',
  '44444444-4444-4444-8444-444444444444', 'token-hash', '2026-10-10T08:00:00.000000Z', NULL,
  NULL, '2026-10-03T08:00:00.000000Z');
INSERT INTO sessions (id, business_id, family, member_id, ip_address, created_at, expires_at,
  revoked_at)
VALUES ('66666666-6666-4666-8666-666666666666', '11111111-1111-4111-8111-111111111111',
  'dashboard', '33333333-3333-4333-8333-333333333333', '10.1.1.1',
  '2026-10-02T09:30:00.123456Z', '2026-10-02T10:30:00.123456Z', NULL);
INSERT INTO accounts (id, business_id, account_number, account_name, account_type, account_class,
  status, parent_account_id, created_at, updated_at, balance, last_balance_update, customer_id)
VALUES ('77777777-7777-4777-8777-777777777777', '11111111-1111-4111-8111-111111111111',
  '2000000001', 'Old Bank Ltd', 'pool', 'primary', 'active', NULL,
  '2026-10-01T08:00:00.000000Z', '2026-10-04T10:00:00.000000Z', 48000,
  '2026-10-04T10:00:00.000000Z', NULL),
  ('88888888-8888-4888-8888-888888888888', '11111111-1111-4111-8111-111111111111',
  '2000000002', 'Savings pot', 'virtual', 'secondary', 'blocked',
  '77777777-7777-4777-8777-777777777777', '2026-10-01T09:00:00.000000Z',
  '2026-10-01T09:00:00.000000Z', 0, NULL, NULL);
INSERT INTO ledger_heads (business_id, last_sequence, last_posted_at, last_posted_micros)
VALUES ('11111111-1111-4111-8111-111111111111', 3, '2026-10-04T10:00:00.000000Z', NULL);
INSERT INTO journal_entries (id, business_id, kind, created_at)
VALUES ('e0000000-0000-4000-8000-000000000001', '11111111-1111-4111-8111-111111111111',
  'inbound_credit', '2026-10-04T09:00:00.000000Z'),
  ('e0000000-0000-4000-8000-000000000002', '11111111-1111-4111-8111-111111111111', 'transfer',
  '2026-10-04T10:00:00.000000Z'),
  ('e0000000-0000-4000-8000-000000000003', '11111111-1111-4111-8111-111111111111', 'hold',
  '2026-10-04T10:00:00.000000Z');
INSERT INTO postings (id, entry_id, account_id, amount, created_at) VALUES
  ('p0000000-0000-4000-8000-000000000001', 'e0000000-0000-4000-8000-000000000001',
   '00000000-0000-4000-8000-000000000001', -60000, '2026-10-04T09:00:00.000000Z'),
  ('p0000000-0000-4000-8000-000000000002', 'e0000000-0000-4000-8000-000000000001',
   '77777777-7777-4777-8777-777777777777', 60000, '2026-10-04T09:00:00.000000Z'),
  ('p0000000-0000-4000-8000-000000000003', 'e0000000-0000-4000-8000-000000000002',
   '77777777-7777-4777-8777-777777777777', -7000, '2026-10-04T10:00:00.000000Z'),
  ('p0000000-0000-4000-8000-000000000004', 'e0000000-0000-4000-8000-000000000002',
   '00000000-0000-4000-8000-000000000002', 7000, '2026-10-04T10:00:00.000000Z'),
  ('p0000000-0000-4000-8000-000000000005', 'e0000000-0000-4000-8000-000000000003',
   '77777777-7777-4777-8777-777777777777', -5000, '2026-10-04T10:00:00.000000Z'),
  ('p0000000-0000-4000-8000-000000000006', 'e0000000-0000-4000-8000-000000000003',
   '00000000-0000-4000-8000-000000000004', 5000, '2026-10-04T10:00:00.000000Z');
INSERT INTO transactions (id, business_id, account_id, entry_id, sequence, reference_number,
  transaction_type, category, status, channel, amount, narration, narration_key, session_id,
  originator_account_number, originator_account_name, originator_bank_code,
  originator_bank_name, created_at, balance_after)
VALUES ('a0000000-0000-4000-8000-000000000001', '11111111-1111-4111-8111-111111111111',
  '77777777-7777-4777-8777-777777777777', 'e0000000-0000-4000-8000-000000000001', 1,
  'CR0001', 'credit', 'collection', 'success', 'nip', 60000, 'School fees',
  'school fees cr0001', 'NIPSESSION1', '0123456789', 'Parent', '000013', 'GTBank',
  '2026-10-04T09:00:00.000000Z', 60000),
  ('a0000000-0000-4000-8000-000000000002', '11111111-1111-4111-8111-111111111111',
  '77777777-7777-4777-8777-777777777777', 'e0000000-0000-4000-8000-000000000002', 2,
  'TR0001', 'debit', 'transfer', 'success', 'nip', 7000, 'Rent', 'rent tr0001', 'NIPSESSION2',
  NULL, NULL, NULL, NULL, '2026-10-04T10:00:00.000000Z', 53000),
  ('a0000000-0000-4000-8000-000000000003', '11111111-1111-4111-8111-111111111111',
  '77777777-7777-4777-8777-777777777777', 'e0000000-0000-4000-8000-000000000003', 3,
  'TR0002', 'debit', 'transfer', 'pending', 'nip', 5000, 'Supplies', 'supplies tr0002', NULL,
  NULL, NULL, NULL, NULL, '2026-10-04T10:00:00.000000Z', 48000);
INSERT INTO settlements (id, business_id, account_id, reference, amount, status, settlement_date,
  created_at)
VALUES ('a0000000-0000-4000-8000-000000000001', '11111111-1111-4111-8111-111111111111',
  '77777777-7777-4777-8777-777777777777', 'CR0001', 60000, 'success',
  '2026-10-04T09:00:00.000000Z', '2026-10-04T09:00:00.000000Z');
INSERT INTO transfers (id, business_id, reference_number, reference, source_account_id,
  beneficiary_account_number, beneficiary_account_name, beneficiary_account_id, bank_code,
  bank_name, transfer_type, amount, fee, vat, narration, transfer_status, approval_status,
  session_id, failure_reason, reversal_reference_number, debit_transaction_id,
  fee_transaction_id, initiated_by, initiated_via, reviewed_by, expires_at, day, submitted,
  attempts, next_attempt_at, lease_until, created_at, updated_at, credential_issued_by)
VALUES ('t0000000-0000-4000-8000-000000000001', '11111111-1111-4111-8111-111111111111', 'TR0001',
  'rent-october', '77777777-7777-4777-8777-777777777777', '0987654321', 'Landlord', NULL,
  '000013', 'GTBank', 'inter', 7000, 0, 0, 'Rent', 'success', 'not_required', 'NIPSESSION2',
  NULL, NULL, 'a0000000-0000-4000-8000-000000000002', NULL,
  '33333333-3333-4333-8333-333333333333', 'dashboard', NULL, NULL, '2026-10-04', 1, 1, NULL,
  NULL, '2026-10-04T10:00:00.000000Z', '2026-10-04T10:00:05.000000Z', NULL),
  ('t0000000-0000-4000-8000-000000000002', '11111111-1111-4111-8111-111111111111', 'TR0002',
  NULL, '77777777-7777-4777-8777-777777777777', '1122334455', 'Supplier', NULL, '000016',
  'First Bank', 'inter', 5000, 0, 0, 'Supplies', 'pending_approval', 'awaiting_approval', NULL,
  NULL, NULL, 'a0000000-0000-4000-8000-000000000003', NULL,
  '33333333-3333-4333-8333-333333333333', 'integration', NULL, '2026-10-05T10:00:00.000000Z',
  '2026-10-04', 0, 0, NULL, NULL, '2026-10-04T10:00:00.000000Z',
  '2026-10-04T10:00:00.000000Z', '33333333-3333-4333-8333-333333333333');
INSERT INTO webhook_configurations (id, business_id, url, is_active, ip_whitelist, event_types,
  secret, previous_secret, previous_secret_expires_at, created_at, updated_at)
VALUES ('99999999-9999-4999-8999-999999999999', '11111111-1111-4111-8111-111111111111',
  'https://old.example/hooks', 1, '["10.0.0.0/8"]', '["transfer.success"]', 'whsec_new',
  'whsec_old', '2026-10-06T00:00:00.000000Z', '2026-10-01T08:00:00.000000Z',
  '2026-10-05T00:00:00.000000Z');
INSERT INTO events (id, business_id, type, payload, created_at, delivery_status, attempts,
  budget_start, next_attempt_at, last_attempt_at, last_response_status, last_error)
VALUES ('f0000000-0000-4000-8000-000000000001', '11111111-1111-4111-8111-111111111111',
  'transfer.success', '{"reference_number":"TR0001"}', '2026-10-04T10:00:05.000000Z',
  'delivered', 2, 0, NULL, '2026-10-04T10:01:00.000000Z', 200, NULL);
INSERT INTO webhook_attempts (id, event_id, attempted_at, url, response_status, error,
  latency_ms, response_body)
VALUES ('b0000000-0000-4000-8000-000000000001', 'f0000000-0000-4000-8000-000000000001',
  '2026-10-04T10:00:06.000000Z', 'https://old.example/hooks', NULL, 'timed out', 5000, NULL),
  ('b0000000-0000-4000-8000-000000000002', 'f0000000-0000-4000-8000-000000000001',
  '2026-10-04T10:01:00.000000Z', 'https://old.example/hooks', 200, NULL, 35, 'ok');
INSERT INTO daily_transfer_totals (business_id, day, amount)
VALUES ('11111111-1111-4111-8111-111111111111', '2026-10-04', 7000);
"#;

/// A database made by today's release (the service's migrations 0001..0013, as its `sqlx`
/// migrator recorded them, and rows as it wrote them) is opened by this crate's store, whose
/// migrations are byte-identical (so `migrate` finds nothing to do and no checksum differs),
/// and every row reads back unchanged.
#[tokio::test]
async fn a_database_of_todays_release_reads_back_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let url = Store::sqlite_url_in(dir.path()).unwrap();
    {
        let options: sqlx::sqlite::SqliteConnectOptions = url.parse().unwrap();
        let pool = sqlx::SqlitePool::connect_with(options.foreign_keys(true))
            .await
            .unwrap();
        RELEASED.run(&pool).await.unwrap();
        sqlx::raw_sql(RELEASED_ROWS).execute(&pool).await.unwrap();
        pool.close().await;
    }
    let store = Store::connect(&url).await.unwrap();
    store
        .migrate()
        .await
        .expect("the release's migrations are ours");
    let applied: Vec<(i64, Vec<u8>)> =
        sqlx::query_as("SELECT version, checksum FROM _sqlx_migrations ORDER BY version")
            .fetch_all(store.pool())
            .await
            .unwrap();
    let ours: Vec<(i64, Vec<u8>)> = kobo_store_sqlite::MIGRATOR
        .iter()
        .map(|m| (m.version, m.checksum.to_vec()))
        .collect();
    assert_eq!(applied, ours);
    // The same schema as the release's, by its fingerprint too.
    let mut digest = <sha2::Sha256 as sha2::Digest>::new();
    for migration in RELEASED.iter() {
        sha2::Digest::update(&mut digest, migration.version.to_le_bytes());
        sha2::Digest::update(&mut digest, &migration.checksum);
    }
    let released = hex::encode(&sha2::Digest::finalize(digest)[..6]);
    assert_eq!(kobo_store_sqlite::schema_fingerprint(), released);
    assert_eq!(Store::schema_fingerprint(), released);

    let business = "11111111-1111-4111-8111-111111111111";
    let found = businesses::find(&store, "kobo_test_old")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        found,
        businesses::Business {
            id: business.into(),
            name: "Old Bank Ltd".into(),
            status: "active".into(),
            client_id: "kobo_test_old".into(),
            created_at: at("2026-10-01T08:00:00Z"),
        }
    );

    let main = accounts::find_by_id(&store, "77777777-7777-4777-8777-777777777777")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        main,
        accounts::AccountRow {
            id: "77777777-7777-4777-8777-777777777777".into(),
            account_number: "2000000001".into(),
            account_name: "Old Bank Ltd".into(),
            account_type: "pool".into(),
            account_class: "primary".into(),
            status: "active".into(),
            balance: 48_000,
            last_balance_update: Some(at("2026-10-04T10:00:00Z")),
            parent_account_number: None,
            customer_id: None,
            created_at: at("2026-10-01T08:00:00Z"),
        }
    );
    let listed = accounts::list(&store, business, &Default::default(), None, 10)
        .await
        .unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0].status, "blocked");
    assert_eq!(
        listed[0].parent_account_number.as_deref(),
        Some("2000000001")
    );
    assert_eq!(listed[1], main);

    let transactions = transactions::list(
        &store,
        transactions::Listing::Transactions,
        business,
        &Default::default(),
        &transactions::Window {
            size: 10,
            cursor: None,
            offset: None,
        },
    )
    .await
    .unwrap();
    let references: Vec<_> = transactions
        .iter()
        .map(|t| t.reference_number.as_str())
        .collect();
    assert_eq!(references, ["TR0002", "TR0001", "CR0001"]);
    assert_eq!(
        transactions[2],
        transactions::TransactionRow {
            id: "a0000000-0000-4000-8000-000000000001".parse().unwrap(),
            reference_number: "CR0001".into(),
            transaction_type: "credit".into(),
            category: "collection".into(),
            status: "success".into(),
            channel: "nip".into(),
            amount: 60_000,
            narration: "School fees".into(),
            session_id: Some("NIPSESSION1".into()),
            originator_account_number: Some("0123456789".into()),
            originator_account_name: Some("Parent".into()),
            originator_bank_code: Some("000013".into()),
            originator_bank_name: Some("GTBank".into()),
            created_at: at("2026-10-04T09:00:00Z"),
            account_number: "2000000001".into(),
            balance_after: 60_000,
            account_name: "Old Bank Ltd".into(),
        }
    );
    let settlements = transactions::list(
        &store,
        transactions::Listing::Settlements,
        business,
        &Default::default(),
        &transactions::Window {
            size: 10,
            cursor: None,
            offset: None,
        },
    )
    .await
    .unwrap();
    assert_eq!(settlements, transactions[2..]);

    let settled = transfers::find(
        &store,
        business,
        transfers::Lookup::Reference("rent-october"),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(
        settled,
        transfers::TransferRow {
            id: "t0000000-0000-4000-8000-000000000001".into(),
            reference_number: "TR0001".into(),
            reference: Some("rent-october".into()),
            amount: 7_000,
            fee: 0,
            vat: 0,
            transfer_status: "success".into(),
            approval_status: "not_required".into(),
            transfer_type: "inter".into(),
            source_account_number: "2000000001".into(),
            beneficiary_account_number: "0987654321".into(),
            beneficiary_account_name: "Landlord".into(),
            bank_code: "000013".into(),
            bank_name: "GTBank".into(),
            narration: "Rent".into(),
            session_id: Some("NIPSESSION2".into()),
            failure_reason: None,
            reversal_reference_number: None,
            initiated_by: "33333333-3333-4333-8333-333333333333".into(),
            initiated_via: "dashboard".into(),
            reviewed_by: None,
            expires_at: None,
            created_at: at("2026-10-04T10:00:00Z"),
            updated_at: at("2026-10-04T10:00:05Z"),
        }
    );
    let held = transfers::held(&store, business, "TR0002")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        held,
        transfers::HeldRow {
            id: "t0000000-0000-4000-8000-000000000002".into(),
            business_id: business.into(),
            source_account_id: "77777777-7777-4777-8777-777777777777".into(),
            beneficiary_account_id: None,
            beneficiary_account_number: "1122334455".into(),
            beneficiary_account_name: "Supplier".into(),
            bank_code: "000016".into(),
            transfer_type: "inter".into(),
            amount: 5_000,
            fee: 0,
            vat: 0,
            narration: "Supplies".into(),
            reference_number: "TR0002".into(),
            debit_transaction_id: Some("a0000000-0000-4000-8000-000000000003".into()),
            fee_transaction_id: None,
            initiated_by: "33333333-3333-4333-8333-333333333333".into(),
            credential_issued_by: Some("33333333-3333-4333-8333-333333333333".into()),
            transfer_status: "pending_approval".into(),
            expires_at: Some(at("2026-10-05T10:00:00Z")),
        }
    );
    let pending = transfers::pending_references(&store, business, None, None, 10)
        .await
        .unwrap();
    assert_eq!(pending, ["TR0002"]);
    assert_eq!(
        transfers::find(&store, business, transfers::Lookup::Id(&held.id))
            .await
            .unwrap()
            .unwrap()
            .expires_at,
        Some(at("2026-10-05T10:00:00Z"))
    );

    // The ledger of the release verifies, and its old head (no micros) advances.
    assert_eq!(audit::postings_total(&store).await.unwrap(), 0);
    assert!(audit::unbalanced_entries(&store).await.unwrap().is_empty());
    assert!(audit::short_entries(&store).await.unwrap().is_empty());
    assert!(audit::postings_to_unknown_accounts(&store)
        .await
        .unwrap()
        .is_empty());
    assert!(audit::transactions_without_posting(&store)
        .await
        .unwrap()
        .is_empty());
    assert!(audit::daily_totals_astray(&store).await.unwrap().is_empty());
    let balances = audit::account_balances(&store).await.unwrap();
    let pool = balances
        .iter()
        .find(|b| b.account_number == "2000000001")
        .unwrap();
    assert_eq!((pool.balance, pool.posted), (48_000, 48_000));
    let mut tx = store.begin().await.unwrap();
    let heads = ledger::advance_heads(&mut tx, &[(business, 1)], at("2026-10-05T00:00:00Z"))
        .await
        .unwrap();
    assert_eq!(heads[0].last_sequence, 4);
    assert_eq!(heads[0].last_posted_micros, None);
    assert_eq!(heads[0].last_posted_at, at("2026-10-04T10:00:00Z"));
    tx.rollback().await.unwrap();

    let endpoint = webhook_endpoints::find_endpoint(&store, business)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        endpoint,
        webhook_endpoints::Endpoint {
            url: "https://old.example/hooks".into(),
            is_active: true,
            ip_whitelist: vec!["10.0.0.0/8".into()],
            event_types: vec!["transfer.success".into()],
            secret: "whsec_new".into(),
            previous_secret: Some("whsec_old".into()),
            previous_secret_expires_at: Some(at("2026-10-06T00:00:00Z")),
        }
    );
    let configuration = webhook_endpoints::find(&store, business)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(configuration.updated_at, at("2026-10-05T00:00:00Z"));
    let delivery = events::find_delivery(
        &store,
        business,
        "f0000000-0000-4000-8000-000000000001",
        at("2026-10-01T00:00:00Z"),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(
        delivery,
        events::Delivery {
            id: "f0000000-0000-4000-8000-000000000001".into(),
            kind: "transfer.success".into(),
            payload: r#"{"reference_number":"TR0001"}"#.into(),
            created_at: at("2026-10-04T10:00:05Z"),
            delivery_status: "delivered".into(),
            attempts: 2,
            budget_start: 0,
            next_attempt_at: None,
            last_attempt_at: Some(at("2026-10-04T10:01:00Z")),
            last_response_status: Some(200),
            last_error: None,
        }
    );
    let attempts = events::newest_attempts(&store, std::slice::from_ref(&delivery.id), 5)
        .await
        .unwrap();
    assert_eq!(
        attempts,
        [
            events::Attempt {
                event_id: delivery.id.clone(),
                attempted_at: at("2026-10-04T10:01:00Z"),
                response_status: Some(200),
                error: None,
                latency_ms: 35,
                response_body: Some("ok".into()),
            },
            events::Attempt {
                event_id: delivery.id.clone(),
                attempted_at: at("2026-10-04T10:00:06Z"),
                response_status: None,
                error: Some("timed out".into()),
                latency_ms: 5_000,
                response_body: None,
            },
        ]
    );

    let mut session = sessions::find_for_token(&store, "66666666-6666-4666-8666-666666666666")
        .await
        .unwrap()
        .unwrap();
    let profile = session
        .profile
        .take()
        .expect("the owner's profile, read with the session");
    assert_eq!(
        session,
        sessions::Authenticated {
            business_id: business.into(),
            family: "dashboard".into(),
            member_id: Some("33333333-3333-4333-8333-333333333333".into()),
            expires_at: at("2026-10-02T10:30:00.123456Z"),
            revoked_at: None,
            member: Some(sessions::SessionMember {
                email: "owner@old.example".into(),
                first_name: "Olu".into(),
                last_name: "Wale".into(),
                role_id: "22222222-2222-4222-8222-222222222222".into(),
                is_active: true,
                permission_codes: Some(r#"["transfers.create","transfers.approve"]"#.into()),
            }),
            business_status: "active".into(),
            client_id: "kobo_test_old".into(),
            secret_issued_by: None,
            credentials_usable: true,
            profile: None,
            generation: 0,
        }
    );
    assert_eq!(
        profile.member,
        members::Member {
            id: "33333333-3333-4333-8333-333333333333".parse().unwrap(),
            email: "owner@old.example".into(),
            first_name: "Olu".into(),
            last_name: "Wale".into(),
            role_id: "22222222-2222-4222-8222-222222222222".parse().unwrap(),
            role_name: "Owner".into(),
            is_active: true,
            invitation_status: "accepted".into(),
            last_login: Some(at("2026-10-02T09:30:00.123456Z")),
            date_joined: at("2026-10-01T08:00:00Z"),
            created_at: at("2026-10-01T08:00:00Z"),
            invitation_expires_at: None,
        }
    );
    assert!(profile.role.is_built_in);
    assert_eq!(profile.business, found);
    let invited = members::find(&store, business, "44444444-4444-4444-8444-444444444444")
        .await
        .unwrap()
        .unwrap();
    assert!(!invited.is_active);
    assert_eq!(
        invited.invitation_expires_at,
        Some(at("2026-10-10T08:00:00Z"))
    );
    let invitation = invitations::find_by_token_hash(&store, "token-hash")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(invitation.email, "checker@old.example");
    assert_eq!(invitation.expires_at, at("2026-10-10T08:00:00Z"));
    let memberships = members::memberships(&store, "owner@old.example", "kobo_test_", None, 5)
        .await
        .unwrap();
    assert_eq!(memberships.len(), 1);
    assert_eq!(memberships[0].password_hash.as_deref(), Some("argon2id$x"));
    assert!(memberships[0].is_active);

    // And it takes writes as the release's did.
    let mut tx = store.begin().await.unwrap();
    assert!(accounts::set_status(
        &mut tx,
        "88888888-8888-4888-8888-888888888888",
        "blocked",
        "active"
    )
    .await
    .unwrap());
    tx.commit().await.unwrap();
}

/// A batch claiming `key` with `data` as its answer, at `when`.
fn claiming(key: &idempotency_keys::KeyOf<'_>, data: &str, when: DateTime<Utc>) -> batch::Batch {
    let mut writes = batch::Batch::new();
    writes.push(batch::Write::Answer(batch::Answer {
        business_id: key.business_id.to_owned(),
        operation: key.operation.to_owned(),
        key: key.key.to_owned(),
        data: data.to_owned(),
        claim: Some(batch::KeyClaim {
            request_hash: format!("hash of {data}"),
            at: when,
            expired_before: when - Duration::hours(24),
        }),
    }));
    writes
}

/// A key claimed by a batch with its answer is stored once: a second claim finds it taken
/// (and keeps it as it was), one made after it expired replaces it.
#[tokio::test]
async fn a_batch_claims_a_key_with_its_answer_once() {
    let (_dir, store) = fresh().await;
    let f = business(&store, "Ada Stores", "1000000001").await;
    let key = idempotency_keys::KeyOf {
        business_id: &f.business,
        operation: "funds_transfer_api",
        key: "k1",
    };
    let first = at("2026-11-02T10:00:00Z");
    let mut tx = store.begin().await.unwrap();
    batch::run(&mut tx, claiming(&key, "\"first\"", first))
        .await
        .unwrap();
    tx.commit().await.unwrap();

    let mut tx = store.begin().await.unwrap();
    let taken = batch::run(
        &mut tx,
        claiming(&key, "\"second\"", first + Duration::hours(1)),
    )
    .await
    .unwrap_err();
    assert!(matches!(taken, StoreError::KeyTaken), "{taken:?}");
    drop(tx);
    let stored = idempotency_keys::find_unexpired(&store, &key, first - Duration::hours(1))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.response_data.as_deref(), Some("\"first\""));
    assert_eq!(stored.request_hash, "hash of \"first\"");

    let later = first + Duration::hours(25);
    let mut tx = store.begin().await.unwrap();
    batch::run(&mut tx, claiming(&key, "\"again\"", later))
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let stored = idempotency_keys::find_unexpired(&store, &key, later - Duration::hours(24))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.response_data.as_deref(), Some("\"again\""));
}
