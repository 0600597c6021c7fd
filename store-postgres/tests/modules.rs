//! A round trip through every module: typed rows written and read back equal (ids, times,
//! flags, arrays, amounts).

mod common;

use chrono::{DateTime, Duration, Utc};
use common::{new_id, now, TestDb};
use kobo_store::batch::Batch;
use kobo_store_postgres::*;

/// A business with its built-in role, its first member, its main account and a current
/// account, written through the crate.
struct World {
    business_id: String,
    client_id: String,
    role_id: String,
    member_id: String,
    main_id: String,
    main_number: String,
    current_id: String,
    current_number: String,
    at: DateTime<Utc>,
}

async fn world(db: &TestDb) -> World {
    let at = now();
    let w = World {
        business_id: new_id(),
        client_id: format!("kobo_test_{}", uuid::Uuid::new_v4().simple()),
        role_id: new_id(),
        member_id: new_id(),
        main_id: new_id(),
        main_number: format!("10{:08}", rand_digits()),
        current_id: new_id(),
        current_number: format!("20{:08}", rand_digits()),
        at,
    };
    let mut tx = db.pool.inner().begin().await.unwrap();
    businesses::insert(
        &mut tx,
        &businesses::NewBusiness {
            id: &w.business_id,
            name: "Ada Foods",
            status: "active",
            client_id: &w.client_id,
            client_secret_hash: "hash",
        },
        at,
    )
    .await
    .unwrap();
    roles::upsert_built_in(
        &mut tx,
        &w.role_id,
        &roles::Definition {
            name: "Owner",
            name_key: "owner",
            description: "Everything",
            permission_codes: r#"["a","b"]"#,
        },
        "2026-10-15T10:00:00.000000Z",
    )
    .await
    .unwrap();
    members::insert_first(
        &mut tx,
        &members::NewMember {
            id: &w.member_id,
            business_id: &w.business_id,
            email: "ada@example.com",
            first_name: "Ada",
            last_name: "Obi",
            role_id: &w.role_id,
        },
        Some("pw-hash"),
        at,
    )
    .await
    .unwrap();
    accounts::insert_main(
        &mut tx,
        &w.main_id,
        &w.business_id,
        &w.main_number,
        "Ada Foods",
        at,
    )
    .await
    .unwrap();
    accounts::insert(
        &mut tx,
        &accounts::NewAccount {
            id: &w.current_id,
            business_id: &w.business_id,
            account_number: &w.current_number,
            account_name: "Ada Foods payroll",
            account_type: "current",
            parent_account_id: &w.main_id,
            customer_id: None,
            created_at: at + Duration::microseconds(1),
        },
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    w
}

fn rand_digits() -> u32 {
    (uuid::Uuid::new_v4().as_u128() % 100_000_000) as u32
}

#[tokio::test]
async fn businesses_round_trip() {
    let db = TestDb::migrated().await;
    let w = world(&db).await;
    let found = businesses::find(&db.pool, &w.client_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.id, w.business_id);
    assert_eq!(found.created_at, w.at);
    assert_eq!(
        businesses::find(&db.pool, &w.business_id).await.unwrap(),
        Some(found.clone())
    );
    assert_eq!(
        businesses::find(&db.pool, "not-a-uuid").await.unwrap(),
        None
    );
    assert_eq!(businesses::list(&db.pool).await.unwrap(), vec![found]);
    assert_eq!(
        businesses::name_of(&db.pool, &w.business_id).await.unwrap(),
        "Ada Foods"
    );
    assert_eq!(
        businesses::set_daily_transfer_limit(&db.pool, &w.client_id, Some(5_000))
            .await
            .unwrap(),
        1
    );
    let mut tx = db.pool.inner().begin().await.unwrap();
    assert_eq!(
        businesses::locked_for_execution(&mut tx, &w.business_id, 9)
            .await
            .unwrap(),
        ("active".to_owned(), 5_000)
    );
    businesses::set_client_secret(&mut tx, &w.business_id, "new", Some(&w.member_id), now())
        .await
        .unwrap();
    businesses::lock(&mut tx, &w.business_id).await.unwrap();
    assert_eq!(
        businesses::client_id_of(&mut tx, &w.business_id)
            .await
            .unwrap(),
        w.client_id
    );
    tx.commit().await.unwrap();
    let credentials = businesses::credentials_of_client(&db.pool, &w.client_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(credentials.client_secret_hash, "new");
    assert_eq!(
        businesses::set_status(&db.pool, &w.business_id, "inactive", now())
            .await
            .unwrap(),
        1
    );
    assert_eq!(
        businesses::status_of(&db.pool, &w.business_id)
            .await
            .unwrap(),
        Some("inactive".to_owned())
    );
    db.finish().await;
}

#[tokio::test]
async fn members_roles_sessions_invitations_otps_round_trip() {
    let db = TestDb::migrated().await;
    let w = world(&db).await;
    let member = members::find(&db.pool, &w.business_id, &w.member_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(member.id.to_string(), w.member_id);
    assert_eq!(member.role_id.to_string(), w.role_id);
    assert!(member.is_active);
    assert_eq!(member.date_joined, w.at);
    assert_eq!(member.last_login, None);
    let filter = members::MemberFilter {
        business_id: w.business_id.clone(),
        is_active: Some(true),
        order: members::MemberOrder::LastLogin,
        page_size: 10,
        ..Default::default()
    };
    assert_eq!(
        members::list(&db.pool, &filter).await.unwrap(),
        vec![member.clone()]
    );
    let memberships = members::memberships(&db.pool, "ada@example.com", "kobo_test_", None, 5)
        .await
        .unwrap();
    assert_eq!(memberships.len(), 1);
    assert_eq!(memberships[0].password_hash.as_deref(), Some("pw-hash"));
    let roles = roles::list_of_business(&db.pool, &w.business_id)
        .await
        .unwrap();
    assert_eq!(roles.len(), 1);
    let role = roles[0].clone();
    assert!(role.is_built_in);
    assert_eq!(
        role.created_at,
        "2026-10-15T10:00:00Z".parse::<DateTime<Utc>>().unwrap()
    );
    let custom = new_id();
    let mut tx = db.pool.inner().begin().await.unwrap();
    let definition = roles::Definition {
        name: "Clerk",
        name_key: "clerk",
        description: "Reads",
        permission_codes: "[]",
    };
    roles::insert_custom(&mut tx, &custom, &w.business_id, &definition, w.at)
        .await
        .unwrap();
    let taken = roles::insert_custom(&mut tx, &new_id(), &w.business_id, &definition, w.at).await;
    assert!(
        taken.unwrap_err().is_conflict(),
        "a taken name is a conflict"
    );
    tx.rollback().await.unwrap();

    // Sessions, invitations, OTPs.
    let session = new_id();
    let mut tx = db.pool.inner().begin().await.unwrap();
    sessions::insert(
        &mut tx,
        &sessions::NewSession {
            id: &session,
            business_id: &w.business_id,
            family: "dashboard",
            member_id: Some(&w.member_id),
            ip_address: "10.0.0.1",
            created_at: w.at,
            expires_at: w.at + Duration::hours(1),
        },
    )
    .await
    .unwrap();
    invitations::insert(
        &mut tx,
        &invitations::NewInvitation {
            business_id: &w.business_id,
            member_id: &w.member_id,
            token_hash: "token",
            expires_at: w.at + Duration::days(1),
        },
        w.at,
    )
    .await
    .unwrap();
    let otp = new_id();
    otps::insert(
        &mut tx,
        &otps::NewOtp {
            id: &otp,
            business_id: &w.business_id,
            member_id: &w.member_id,
            code_hash: "code",
            expires_at: w.at + Duration::minutes(5),
            created_at: w.at,
        },
    )
    .await
    .unwrap();
    let attempted = otps::count_attempt(&mut tx, &w.member_id, w.at, 3)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (attempted.id.as_str(), attempted.attempts),
        (otp.as_str(), 1)
    );
    let issued = otps::issued_since(&mut tx, &w.member_id, w.at)
        .await
        .unwrap();
    assert_eq!((issued.count, issued.oldest), (1, Some(w.at)));
    assert!(otps::use_up(&mut tx, &otp, w.at).await.unwrap());
    assert!(!otps::use_up(&mut tx, &otp, w.at).await.unwrap());
    let standing = members::standing(&mut tx, &w.member_id, &w.business_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(standing.role_id, w.role_id);
    assert_eq!(
        members::count_active_with_role(&mut tx, &w.business_id, &w.role_id, &new_id())
            .await
            .unwrap(),
        1
    );
    tx.commit().await.unwrap();
    let authenticated = sessions::find_for_token(&db.pool, &session)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        authenticated.member_id.as_deref(),
        Some(w.member_id.as_str())
    );
    assert_eq!(authenticated.expires_at, w.at + Duration::hours(1));
    let profile = authenticated
        .profile
        .expect("the member's profile, read with the session");
    assert_eq!(
        profile.member,
        members::Member {
            invitation_expires_at: Some(w.at + Duration::days(1)),
            ..member.clone()
        }
    );
    assert_eq!(profile.role, role);
    assert_eq!(profile.business.id, w.business_id);
    let session_member = authenticated.member.unwrap();
    assert!(session_member.is_active);
    assert_eq!(
        session_member.permission_codes.as_deref(),
        Some(r#"["a","b"]"#)
    );
    let invitation = invitations::find_by_token_hash(&db.pool, "token")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(invitation.member_id, w.member_id);
    assert_eq!(invitation.expires_at, w.at + Duration::days(1));
    let mut tx = db.pool.inner().begin().await.unwrap();
    assert!(invitations::use_up(&mut tx, &invitation.id, w.at)
        .await
        .unwrap());
    sessions::revoke_all_of_member(&mut tx, &w.member_id, w.at)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let revoked = sessions::find_for_token(&db.pool, &session).await.unwrap();
    assert_eq!(revoked.unwrap().revoked_at, Some(w.at));
    db.finish().await;
}

#[tokio::test]
async fn accounts_ledger_transactions_round_trip() {
    let db = TestDb::migrated().await;
    let w = world(&db).await;
    let main = accounts::find_by_id(&db.pool, &w.main_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(main.account_number, w.main_number);
    assert_eq!(main.created_at, w.at);
    let current = accounts::find_by_number_anywhere(&db.pool, &w.current_number)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        current.account.parent_account_number.as_deref(),
        Some(w.main_number.as_str())
    );
    assert_eq!(current.business_id, w.business_id);

    // A collection of 10^18 kobo twice: sums pass an i64.
    let big: i64 = 1_000_000_000_000_000_000;
    let settlement = "00000000-0000-4000-8000-000000000001";
    let mut tx = db.pool.inner().begin().await.unwrap();
    let heads = ledger::advance_heads(&mut tx, &[(&w.business_id, 2)], w.at)
        .await
        .unwrap();
    assert_eq!(heads[0].last_sequence, 2);
    assert_eq!(heads[0].last_posted_at, w.at);
    let mut batch = Batch::new();
    for (sequence, account) in [(1, &w.main_id), (2, &w.current_id)] {
        let entry = ledger::record_entry_into(
            &mut batch,
            &w.business_id,
            "inbound_credit",
            &[(settlement, -big), (account.as_str(), big)],
            w.at,
        );
        transactions::record_into(
            &mut batch,
            kobo_store::transactions::NewTransaction {
                id: uuid::Uuid::new_v4(),
                business_id: w.business_id.clone(),
                account_id: account.clone(),
                entry_id: entry,
                sequence,
                reference_number: format!("REF{sequence}"),
                transaction_type: "credit".into(),
                category: "collection".into(),
                status: "success".into(),
                channel: "nip".into(),
                amount: big,
                narration: "Sale".into(),
                session_id: None,
                originator: None,
                created_at: w.at + Duration::microseconds(sequence),
                settled: true,
            },
        );
    }
    batch::run(&mut tx, batch).await.unwrap();
    let changed = accounts::apply_balance_changes(
        &mut tx,
        &[
            accounts::BalanceChange {
                account_id: &w.main_id,
                amount: big,
                must_be_active: false,
            },
            accounts::BalanceChange {
                account_id: &w.current_id,
                amount: big,
                must_be_active: false,
            },
        ],
        i64::MAX,
        w.at,
    )
    .await
    .unwrap();
    assert_eq!(changed.len(), 2);
    assert_eq!(
        accounts::balance_and_status(&mut tx, &w.main_id)
            .await
            .unwrap(),
        Some((big, "active".to_owned()))
    );
    assert_eq!(sequences::next(&mut tx, "nuban").await.unwrap(), 1);
    assert_eq!(sequences::next(&mut tx, "nuban").await.unwrap(), 2);
    tx.commit().await.unwrap();

    let metrics = accounts::metrics(&db.pool, &w.business_id, &Default::default())
        .await
        .unwrap();
    assert_eq!(metrics.balance, 2 * i128::from(big));
    assert_eq!(metrics.collected, 2 * i128::from(big));
    assert_eq!(metrics.active, 2);
    let activity = accounts::activity(&db.pool, &[&w.main_id], None, None)
        .await
        .unwrap();
    assert_eq!(activity[&w.main_id].collected, i128::from(big));
    assert_eq!(
        activity[&w.main_id].last_collection,
        Some(w.at + Duration::microseconds(1))
    );
    assert_eq!(audit::postings_total(&db.pool).await.unwrap(), 0);
    assert!(audit::unbalanced_entries(&db.pool)
        .await
        .unwrap()
        .is_empty());
    assert!(audit::transactions_without_posting(&db.pool)
        .await
        .unwrap()
        .is_empty());
    let balances = audit::account_balances(&db.pool).await.unwrap();
    assert!(balances.iter().all(|b| b.posted == i128::from(b.balance)));
    assert_eq!(
        audit::count(&db.pool, kobo_store::audit::Counted::Postings)
            .await
            .unwrap(),
        4
    );

    // Listing: two pages of one, newest first, then the account filter.
    let window = |cursor| kobo_store::transactions::Window {
        size: 1,
        cursor,
        offset: None,
    };
    let first = transactions::list(
        &db.pool,
        kobo_store::transactions::Listing::Settlements,
        &w.business_id,
        &Default::default(),
        &window(None),
    )
    .await
    .unwrap();
    assert_eq!(first.len(), 2);
    assert_eq!(first[0].reference_number, "REF2");
    let cursor = kobo_store::paging::Cursor {
        created_at: first[0].created_at,
        id: first[0].id,
    };
    let second = transactions::list(
        &db.pool,
        kobo_store::transactions::Listing::Transactions,
        &w.business_id,
        &Default::default(),
        &window(Some(cursor)),
    )
    .await
    .unwrap();
    assert_eq!(second, vec![first[1].clone()]);
    let filters = kobo_store::transactions::Filters {
        account_number: Some(w.main_number.clone()),
        search: Some("ref1".into()),
        ..Default::default()
    };
    let only = transactions::list(
        &db.pool,
        kobo_store::transactions::Listing::Transactions,
        &w.business_id,
        &filters,
        &window(None),
    )
    .await
    .unwrap();
    assert_eq!(only.len(), 1);
    assert_eq!(only[0].account_number, w.main_number);

    let page = accounts::list(
        &db.pool,
        &w.business_id,
        &kobo_store::accounts::Filters {
            account_type: Some("normal".into()),
            ..Default::default()
        },
        None,
        10,
    )
    .await
    .unwrap();
    assert_eq!(page.len(), 2);
    assert_eq!(page[0].id, w.current_id);
    let mut lookup = accounts::PayoutLookup {
        default_daily_limit: 100,
        business_id: &w.business_id,
        source: &w.main_number,
        intra_beneficiary: None,
        reference: Some("no transfer holds it"),
        key: None,
    };
    let reads = accounts::payout_reads(&db.pool, &lookup).await.unwrap();
    assert_eq!(reads.len(), 1);
    assert_eq!(reads[0].daily_limit, 100);
    assert_eq!(reads[0].policy_minimum, None);
    assert_eq!(reads[0].reference_owner, None);
    assert_eq!(reads[0].stored_key, None);
    // The payout's key, read with its accounts: stored, another key, expired.
    let key = kobo_store::idempotency_keys::KeyOf {
        business_id: &w.business_id,
        operation: "funds_transfer_api",
        key: "read-with-the-accounts",
    };
    let mut tx = db.pool.inner().begin().await.unwrap();
    idempotency_keys::claim(&mut tx, &key, "the hash", w.at, w.at - Duration::days(1))
        .await
        .unwrap();
    tx.commit().await.unwrap();
    lookup.key = Some((key, w.at - Duration::days(1)));
    let reads = accounts::payout_reads(&db.pool, &lookup).await.unwrap();
    let stored = reads[0].stored_key.as_ref().expect("the key, read");
    assert_eq!(stored.request_hash, "the hash");
    assert_eq!(stored.response_data, None);
    let other = kobo_store::idempotency_keys::KeyOf {
        key: "another",
        ..key
    };
    lookup.key = Some((other, w.at - Duration::days(1)));
    let reads = accounts::payout_reads(&db.pool, &lookup).await.unwrap();
    assert_eq!(reads[0].stored_key, None);
    lookup.key = Some((key, w.at + Duration::seconds(1)));
    let reads = accounts::payout_reads(&db.pool, &lookup).await.unwrap();
    assert_eq!(reads[0].stored_key, None, "expired");
    db.finish().await;
}

#[tokio::test]
async fn webhooks_events_and_policies_round_trip() {
    let db = TestDb::migrated().await;
    let w = world(&db).await;
    let endpoint = new_id();
    let whitelist = vec!["10.0.0.0/8".to_owned(), "192.168.1.1".to_owned()];
    let kinds = vec!["transfer.success".to_owned()];
    let mut tx = db.pool.inner().begin().await.unwrap();
    assert!(webhook_endpoints::insert(
        &mut tx,
        &webhook_endpoints::NewEndpoint {
            id: &endpoint,
            business_id: &w.business_id,
            url: "https://example.com/hook",
            ip_whitelist: &whitelist,
            event_types: &kinds,
            secret: "whsec_1",
        },
        w.at,
    )
    .await
    .unwrap());
    assert!(
        approval_policies::insert(&mut tx, &w.business_id, true, 5_000, w.at)
            .await
            .unwrap()
    );
    assert!(
        !approval_policies::insert(&mut tx, &w.business_id, true, 1, w.at)
            .await
            .unwrap()
    );
    assert!(
        approval_policies::update(&mut tx, &w.business_id, None, Some(false), w.at)
            .await
            .unwrap()
    );
    let mut batch = Batch::new();
    let event = events::record_into(
        &mut batch,
        &w.business_id,
        "transfer.success",
        "{}".into(),
        w.at,
    );
    batch::run(&mut tx, batch).await.unwrap();
    tx.commit().await.unwrap();

    let found = webhook_endpoints::find(&db.pool, &w.business_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.id.to_string(), endpoint);
    assert_eq!(found.ip_whitelist, whitelist);
    assert_eq!(found.event_types, kinds);
    assert!(found.is_active);
    let policy = approval_policies::find(&db.pool, &w.business_id)
        .await
        .unwrap()
        .unwrap();
    assert!(!policy.is_active);
    assert_eq!(policy.min_amount, 5_000);

    // The endpoint is active: the event is due at once.
    let delivery = events::find_delivery(&db.pool, &w.business_id, &event, w.at)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(delivery.delivery_status, "pending");
    assert_eq!(delivery.next_attempt_at, Some(w.at));
    let due = events::due(&db.pool, w.at, 5, 10).await.unwrap();
    assert_eq!(due.len(), 1);
    let lease = w.at + Duration::seconds(30);
    let claimed = events::claim(&db.pool, &[&event], lease, w.at)
        .await
        .unwrap();
    assert_eq!(claimed, vec![event.clone()]);
    let attempt = kobo_store::events::AttemptMade {
        url: "https://example.com/hook",
        response_status: Some(200),
        error: None,
        latency_ms: 12,
        response_body: Some("ok"),
    };
    let mut tx = db.pool.inner().begin().await.unwrap();
    events::record_attempt(&mut tx, &event, w.at, &attempt)
        .await
        .unwrap();
    assert!(
        events::finish_attempt(&mut tx, &event, lease, "delivered", None, w.at, &attempt)
            .await
            .unwrap()
    );
    tx.commit().await.unwrap();
    let attempts = events::newest_attempts(&db.pool, std::slice::from_ref(&event), 5)
        .await
        .unwrap();
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0].attempted_at, w.at);
    assert_eq!(attempts[0].response_status, Some(200));
    let page = events::list_deliveries(
        &db.pool,
        &kobo_store::events::DeliveryFilter {
            business_id: w.business_id.clone(),
            since: w.at - Duration::days(30),
            from: None,
            until: None,
            delivery_status: Some("delivered".into()),
            kind: None,
            cursor: None,
            page_size: 10,
        },
    )
    .await
    .unwrap();
    assert_eq!(page.len(), 1);
    assert_eq!(page[0].attempts, 1);
    db.finish().await;
}

#[tokio::test]
async fn logs_notifications_keys_throttles_customers_round_trip() {
    let db = TestDb::migrated().await;
    let w = world(&db).await;
    let activity = kobo_store::logs::Activity {
        business_id: w.business_id.clone(),
        endpoint: "/transfers",
        http_status: 201,
        success: true,
        message: "Transfer made".into(),
        ip_address: "10.0.0.1".into(),
        request_id: "req-1".into(),
    };
    logs::record_activities(&db.pool, &[(w.at, &activity), (w.at, &activity)])
        .await
        .unwrap();
    let entries = logs::list_activity(
        &db.pool,
        &kobo_store::logs::ActivityFilter {
            business_id: w.business_id.clone(),
            status: None,
            method: Some("POST".into()),
            endpoint: None,
            response_code: Some(201),
            from: None,
            until: None,
            search: Some("transfer_".into()),
            cursor: None,
            page_size: 10,
        },
    )
    .await
    .unwrap();
    assert!(entries.is_empty(), "`_` is escaped in searches");
    let entries = logs::list_activity(
        &db.pool,
        &kobo_store::logs::ActivityFilter {
            business_id: w.business_id.clone(),
            status: Some("success".into()),
            method: None,
            endpoint: None,
            response_code: None,
            from: Some(w.at),
            until: None,
            search: Some("TRANSFER".into()),
            cursor: None,
            page_size: 10,
        },
    )
    .await
    .unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0].created_at, w.at);

    let mut tx = db.pool.inner().begin().await.unwrap();
    let mut batch = Batch::new();
    logs::audit_into(
        &mut batch,
        w.at,
        kobo_store::logs::NewAuditEntry {
            business_id: w.business_id.clone(),
            action: "invite_member".into(),
            user_name: "Ada Obi".into(),
            user_id: Some(w.member_id.clone()),
            ip_address: "10.0.0.1".into(),
            response_code: 201,
            target_type: Some("member"),
            target_id: Some("x".into()),
            request_id: "req-2".into(),
        },
    );
    let key = kobo_store::idempotency_keys::KeyOf {
        business_id: &w.business_id,
        operation: "payout",
        key: "k1",
    };
    assert!(
        idempotency_keys::claim(&mut tx, &key, "h", w.at, w.at - Duration::days(1))
            .await
            .unwrap()
    );
    assert!(
        !idempotency_keys::claim(&mut tx, &key, "h", w.at, w.at - Duration::days(1))
            .await
            .unwrap()
    );
    idempotency_keys::complete_into(&mut batch, &key, r#"{"a":1}"#.into());
    batch::run(&mut tx, batch).await.unwrap();
    let id = notifications::insert(
        &mut tx,
        &kobo_store::notifications::NewNotification {
            business_id: Some(&w.business_id),
            channel: "email",
            recipient: "ada@example.com",
            subject: "Hi",
            body: "Body",
        },
        w.at,
    )
    .await
    .unwrap();
    assert_eq!(
        throttles::count_attempt(&mut tx, "login:ip:1", w.at, w.at)
            .await
            .unwrap(),
        Some(1)
    );
    throttles::lock(&mut tx, "login:ip:1", w.at + Duration::minutes(1))
        .await
        .unwrap();
    assert_eq!(
        throttles::locked_until(&mut tx, "login:ip:1")
            .await
            .unwrap(),
        Some(w.at + Duration::minutes(1))
    );
    assert_eq!(
        throttles::count_attempt(&mut tx, "login:ip:1", w.at, w.at)
            .await
            .unwrap(),
        None
    );
    throttles::remember_address(&mut tx, "ada@example.com", "10.0.0.1", w.at)
        .await
        .unwrap();
    let customer = new_id();
    customers::insert(
        &mut tx,
        &kobo_store::customers::NewCustomer {
            id: &customer,
            business_id: &w.business_id,
            email: Some("c@example.com"),
            phone: None,
            bvn_hash: Some("bvn"),
            nin_hash: None,
            verified_identities: r#"["bvn"]"#,
            verified_name: "C",
            metadata: "{}",
            created_at: w.at,
        },
    )
    .await
    .unwrap();
    assert!(
        daily_totals::add_within(&mut tx, &w.business_id, "2026-11-26", 700, 1_000)
            .await
            .unwrap()
    );
    assert!(
        !daily_totals::add_within(&mut tx, &w.business_id, "2026-11-26", 700, 1_000)
            .await
            .unwrap()
    );
    assert_eq!(
        daily_totals::spent(&mut tx, &w.business_id, "2026-11-26")
            .await
            .unwrap(),
        Some(700)
    );
    tx.commit().await.unwrap();

    let audit = logs::list_audit(
        &db.pool,
        &kobo_store::logs::AuditFilter {
            business_id: w.business_id.clone(),
            from: None,
            until: None,
            action: None,
            user_id: Some(w.member_id.clone()),
            search: None,
            cursor: None,
            page_size: 10,
        },
    )
    .await
    .unwrap();
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0].day, w.at.format("%Y-%m-%d").to_string());
    assert_eq!(audit[0].target_type.as_deref(), Some("member"));
    let stored = idempotency_keys::find_unexpired(&db.pool, &key, w.at - Duration::days(1))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.response_data.as_deref(), Some(r#"{"a":1}"#));
    let due = notifications::due(&db.pool, "email", 5, w.at, 10)
        .await
        .unwrap();
    assert_eq!(due.len(), 1);
    assert_eq!(due[0].id, id);
    assert_eq!(due[0].business_id.as_deref(), Some(w.business_id.as_str()));
    assert!(
        notifications::claim(&db.pool, &id, w.at + Duration::minutes(1), w.at)
            .await
            .unwrap()
    );
    notifications::mark_sent(&db.pool, &id, w.at).await.unwrap();
    assert_eq!(notifications::unsent(&db.pool, 5).await.unwrap().count, 0);
    assert!(
        throttles::is_known_address(&db.pool, "ada@example.com", "10.0.0.1")
            .await
            .unwrap()
    );
    let contact = customers::contact(&db.pool, &customer)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(contact.verified_identities, r#"["bvn"]"#);
    db.finish().await;
}

#[tokio::test]
async fn transfers_round_trip() {
    let db = TestDb::migrated().await;
    let w = world(&db).await;
    let mut tx = db.pool.inner().begin().await.unwrap();
    let mut batch = Batch::new();
    let entry = ledger::record_entry_into(
        &mut batch,
        &w.business_id,
        "transfer",
        &[
            (&w.main_id, -500),
            ("00000000-0000-4000-8000-000000000004", 500),
        ],
        w.at,
    );
    let debit = uuid::Uuid::new_v4();
    transactions::record_into(
        &mut batch,
        kobo_store::transactions::NewTransaction {
            id: debit,
            business_id: w.business_id.clone(),
            account_id: w.main_id.clone(),
            entry_id: entry,
            sequence: 1,
            reference_number: "TRF1".into(),
            transaction_type: "debit".into(),
            category: "transfer".into(),
            status: "pending".into(),
            channel: "nip".into(),
            amount: 500,
            narration: "Rent".into(),
            session_id: None,
            originator: None,
            created_at: w.at,
            settled: false,
        },
    );
    let transfer = held_transfer(&w, &debit.to_string());
    transfers::insert_into(&mut batch, transfer.clone());
    batch::run(&mut tx, batch).await.unwrap();
    tx.commit().await.unwrap();

    let found = transfers::find(
        &db.pool,
        &w.business_id,
        kobo_store::transfers::Lookup::Reference("client-1"),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(found, transfer.row);
    for lookup in [
        kobo_store::transfers::Lookup::Id(&transfer.row.id),
        kobo_store::transfers::Lookup::ReferenceNumber("TRF1"),
    ] {
        assert_eq!(
            transfers::find(&db.pool, &w.business_id, lookup)
                .await
                .unwrap(),
            Some(found.clone())
        );
    }
    assert_eq!(
        transfers::reference_owner(&db.pool, &w.business_id, "client-1")
            .await
            .unwrap(),
        Some("TRF1".to_owned())
    );
    let held = transfers::held(&db.pool, &w.business_id, "TRF1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(held.debit_transaction_id, Some(debit.to_string()));
    let pending = transfers::pending_references(&db.pool, &w.business_id, None, None, 10)
        .await
        .unwrap();
    assert_eq!(pending, vec!["TRF1".to_owned()]);
    let expiring = transfers::due_expiries(&db.pool, w.at + Duration::hours(2))
        .await
        .unwrap();
    assert_eq!(expiring, vec![(w.business_id.clone(), "TRF1".to_owned())]);
    let page = transfers::list(
        &db.pool,
        &w.business_id,
        &kobo_store::transfers::Filters {
            source_account_number: Some(w.main_number.clone()),
            ..Default::default()
        },
        None,
        10,
    )
    .await
    .unwrap();
    assert_eq!(page, vec![transfer.row.clone()]);

    // Approved on the next day, then leased by the NIP worker and decided.
    let mut tx = db.pool.inner().begin().await.unwrap();
    let review = kobo_store::transfers::Review {
        from: "pending_approval",
        to: "processing",
        approval_status: "approved",
        reviewer: Some(&w.member_id),
        reason: None,
        day: Some("2026-11-27"),
        at: w.at,
    };
    assert!(transfers::review(&mut tx, &transfer.row.id, &review)
        .await
        .unwrap());
    assert!(!transfers::review(&mut tx, &transfer.row.id, &review)
        .await
        .unwrap());
    assert!(
        daily_totals::add_within(&mut tx, &w.business_id, "2026-11-27", 500, 1_000)
            .await
            .unwrap()
    );
    tx.commit().await.unwrap();
    let leased_ids = transfers::lease_due(&db.pool, w.at, w.at + Duration::minutes(1), 10)
        .await
        .unwrap();
    assert_eq!(leased_ids, vec![transfer.row.id.clone()]);
    let leased = transfers::leased(&db.pool, &leased_ids).await.unwrap();
    assert!(!leased[0].submitted);
    assert_eq!(leased[0].source_account_number, w.main_number);
    transfers::wait(&db.pool, &transfer.row.id, true, w.at, Some("NIP1"), w.at)
        .await
        .unwrap();
    // A worker whose lease ran out, not having submitted it, cannot unmark it.
    transfers::wait(&db.pool, &transfer.row.id, false, w.at, None, w.at)
        .await
        .unwrap();
    let leased = transfers::leased(&db.pool, std::slice::from_ref(&transfer.row.id))
        .await
        .unwrap();
    assert!(leased[0].submitted);
    assert_eq!(leased[0].attempts, 2);
    let mut tx = db.pool.inner().begin().await.unwrap();
    assert!(
        transfers::decide(&mut tx, &transfer.row.id, "processing", "failed", w.at)
            .await
            .unwrap()
    );
    transfers::set_reversal(&mut tx, &transfer.row.id, "declined", "REV1", None)
        .await
        .unwrap();
    daily_totals::subtract_transfer(&mut tx, &transfer.row.id)
        .await
        .unwrap();
    assert_eq!(
        daily_totals::spent(&mut tx, &w.business_id, "2026-11-27")
            .await
            .unwrap(),
        Some(0)
    );
    tx.commit().await.unwrap();
    assert!(audit::daily_totals_astray(&db.pool)
        .await
        .unwrap()
        .is_empty());
    let failed = transfers::find(
        &db.pool,
        &w.business_id,
        kobo_store::transfers::Lookup::Id(&transfer.row.id),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(failed.session_id.as_deref(), Some("NIP1"));
    assert_eq!(failed.reversal_reference_number.as_deref(), Some("REV1"));
    db.finish().await;
}

/// A transfer held for approval, from the main account, debited by `debit`.
fn held_transfer(w: &World, debit: &str) -> kobo_store::transfers::NewTransfer {
    kobo_store::transfers::NewTransfer {
        row: kobo_store::transfers::TransferRow {
            id: new_id(),
            reference_number: "TRF1".into(),
            reference: Some("client-1".into()),
            amount: 500,
            fee: 10,
            vat: 1,
            transfer_status: "pending_approval".into(),
            approval_status: "awaiting_approval".into(),
            transfer_type: "inter".into(),
            source_account_number: w.main_number.clone(),
            beneficiary_account_number: "0123456789".into(),
            beneficiary_account_name: "Landlord".into(),
            bank_code: "000013".into(),
            bank_name: "GTBank".into(),
            narration: "Rent".into(),
            session_id: None,
            failure_reason: None,
            reversal_reference_number: None,
            initiated_by: w.member_id.clone(),
            initiated_via: "dashboard".into(),
            reviewed_by: None,
            expires_at: Some(w.at + Duration::hours(1)),
            created_at: w.at,
            updated_at: w.at,
        },
        business_id: w.business_id.clone(),
        source_account_id: w.main_id.clone(),
        beneficiary_account_id: None,
        debit_transaction_id: Some(debit.to_owned()),
        fee_transaction_id: None,
        day: "2026-11-26".into(),
        credential_issued_by: None,
    }
}

#[tokio::test]
async fn seeding_round_trip() {
    let db = TestDb::migrated().await;
    let w = world(&db).await;
    let mut rows = seeding::SeedRows::with_capacity(3);
    for n in 0..3 {
        rows.push(&kobo_store::seeding::SeededCredit {
            business_id: &w.business_id,
            account_id: &w.current_id,
            settlement_account_id: "00000000-0000-4000-8000-000000000001",
            entry_id: new_id(),
            posting_ids: [new_id(), new_id()],
            id: new_id(),
            sequence: n + 1,
            reference: format!("SEED{n}"),
            narration: "Seed".into(),
            amount: 100,
            balance_after: 100 * (n + 1),
            at: w.at + Duration::microseconds(n),
        });
    }
    let mut tx = db.pool.inner().begin().await.unwrap();
    rows.insert(&mut tx).await.unwrap();
    assert_eq!(
        seeding::add_to_balance(&mut tx, &w.current_id, 300, w.at, i64::MAX)
            .await
            .unwrap(),
        Some(300)
    );
    tx.commit().await.unwrap();
    seeding::analyze_transactions(&db.pool).await.unwrap();
    // The check looks for postings to the bank's internal accounts: the seeded credits came
    // through the sandbox's settlement account, and none through production's.
    let settlement = "00000000-0000-4000-8000-000000000001";
    assert!(
        seeding::any_posting_to(&db.pool, [settlement, settlement, settlement, settlement])
            .await
            .unwrap()
    );
    let production = [
        "00000000-0000-4000-8000-000000000011",
        "00000000-0000-4000-8000-000000000012",
        "00000000-0000-4000-8000-000000000013",
        "00000000-0000-4000-8000-000000000014",
    ];
    assert!(!seeding::any_posting_to(&db.pool, production).await.unwrap());
    assert_eq!(
        seeding::business_of_account(&db.pool, &w.current_number)
            .await
            .unwrap(),
        Some(w.business_id.clone())
    );
    assert_eq!(
        seeding::active_accounts_by_balance(&db.pool, &w.business_id)
            .await
            .unwrap()[0],
        w.current_number
    );
    assert!(audit::account_balances(&db.pool)
        .await
        .unwrap()
        .iter()
        .all(|b| b.posted == i128::from(b.balance)));
    db.finish().await;
}

#[tokio::test]
async fn members_are_listed_in_every_order() {
    let db = TestDb::migrated().await;
    let w = world(&db).await;
    let mut tx = db.pool.inner().begin().await.unwrap();
    let people = [
        ("bola@example.com", "bola", "Zed"),
        ("chi@example.com", "Chi", "ade"),
    ];
    for (n, (email, first, last)) in people.iter().enumerate() {
        members::insert_invited(
            &mut tx,
            &members::NewMember {
                id: &new_id(),
                business_id: &w.business_id,
                email,
                first_name: first,
                last_name: last,
                role_id: &w.role_id,
            },
            w.at + Duration::seconds(n as i64 + 1),
        )
        .await
        .unwrap();
    }
    members::record_login(&mut tx, &w.member_id, w.at)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let emails = |order, ascending| {
        let filter = members::MemberFilter {
            business_id: w.business_id.clone(),
            order,
            ascending,
            page_size: 10,
            ..Default::default()
        };
        let pool = db.pool.clone();
        async move {
            members::list(&pool, &filter)
                .await
                .unwrap()
                .into_iter()
                .map(|m| m.email)
                .collect::<Vec<_>>()
        }
    };
    use members::MemberOrder::*;
    let (ada, bola, chi) = ("ada@example.com", "bola@example.com", "chi@example.com");
    assert_eq!(emails(DateJoined, true).await, [ada, bola, chi]);
    assert_eq!(emails(DateJoined, false).await, [chi, bola, ada]);
    assert_eq!(emails(Email, false).await, [chi, bola, ada]);
    // Case-insensitive names.
    assert_eq!(emails(FirstName, true).await, [ada, bola, chi]);
    assert_eq!(emails(LastName, true).await, [chi, ada, bola]);
    assert_eq!(emails(LastName, false).await, [bola, ada, chi]);
    // Members who never logged in come last either way.
    assert_eq!(emails(LastLogin, true).await[0], ada);
    assert_eq!(emails(LastLogin, false).await[0], ada);
    let filter = members::MemberFilter {
        business_id: w.business_id.clone(),
        is_active: Some(false),
        role_id: Some(w.role_id.clone()),
        joined_from: Some(w.at + Duration::seconds(2)),
        offset: 0,
        page_size: 10,
        ..Default::default()
    };
    let inactive = members::list(&db.pool, &filter).await.unwrap();
    assert_eq!(inactive.len(), 1);
    assert_eq!(inactive[0].email, chi);
    assert!(!inactive[0].is_active);
    db.finish().await;
}

/// A payout's first statement (`ledger::advance_and_move`) does what its three steps did: the
/// head's places and times, the daily total on the Lagos day of the first place (not of the
/// clock, when the clock is behind the head), the balances at that time; a total over the
/// limit moves no balance; an account that cannot take its change is left out of `moved`; an
/// inactive business moves nothing.
#[tokio::test]
async fn a_payouts_first_statement_takes_its_places_counts_and_moves() {
    let db = TestDb::migrated().await;
    let w = world(&db).await;
    let mut tx = db.pool.inner().begin().await.unwrap();
    let funded = [accounts::BalanceChange {
        account_id: &w.main_id,
        amount: 1_000,
        must_be_active: false,
    }];
    accounts::apply_balance_changes(&mut tx, &funded, i64::MAX, w.at)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let at = |text: &str| DateTime::parse_from_rfc3339(text).unwrap().to_utc();
    let pay = |amount: i64| {
        [
            accounts::BalanceChange {
                account_id: &w.main_id,
                amount: -amount,
                must_be_active: true,
            },
            accounts::BalanceChange {
                account_id: &w.current_id,
                amount,
                must_be_active: false,
            },
        ]
    };
    // `(amount, limit)`: the business has no limit of its own, so the default is its limit.
    let money = |changes, daily: Option<(i64, i64)>| ledger::Money {
        business_id: &w.business_id,
        places: 2,
        daily: daily.map(|(amount, _)| amount),
        default_daily_limit: daily.map_or(0, |(_, limit)| limit),
        business_must_be_active: true,
        changes,
        max_balance: i64::MAX,
    };
    let totals = async || -> Vec<(String, i64)> {
        sqlx::query_as(
            "SELECT day::text, amount FROM daily_transfer_totals WHERE business_id = $1::uuid \
             ORDER BY day",
        )
        .bind(&w.business_id)
        .fetch_all(db.pool.inner())
        .await
        .unwrap()
    };
    let balance = async |account: &str| -> (i64, DateTime<Utc>) {
        sqlx::query_as("SELECT balance, last_balance_update FROM accounts WHERE id = $1::uuid")
            .bind(account)
            .fetch_one(db.pool.inner())
            .await
            .unwrap()
    };
    let businesses = [(w.business_id.as_str(), 2)];

    // 23:59:59.999999 in Lagos: the first place is now, the last a microsecond later (the
    // next Lagos day); the amount counts on the first place's day.
    let first = at("2026-03-01T22:59:59.999999Z");
    let changes = pay(300);
    let mut tx = db.pool.inner().begin().await.unwrap();
    let done = ledger::advance_and_move(
        &mut tx,
        &businesses,
        first,
        &money(&changes, Some((300, 1_000))),
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(done.heads.len(), 1);
    assert_eq!(done.heads[0].last_sequence, 2);
    assert_eq!(done.business, Some((true, 1_000)));
    assert_eq!(
        done.heads[0].last_posted_micros,
        Some(first.timestamp_micros() + 1)
    );
    assert!(done.counted);
    let mut moved = done.moved.clone();
    moved.sort();
    let mut both = vec![w.main_id.clone(), w.current_id.clone()];
    both.sort();
    assert_eq!(moved, both);
    assert_eq!(totals().await, [("2026-03-01".to_owned(), 300)]);
    assert_eq!(balance(&w.main_id).await, (700, first));

    // The clock behind the head: the places follow the head, into the next Lagos day, and
    // the amount counts there (a new day: within the limit again).
    let changes = pay(600);
    let mut tx = db.pool.inner().begin().await.unwrap();
    let done = ledger::advance_and_move(
        &mut tx,
        &businesses,
        at("2026-03-01T22:59:59.999000Z"),
        &money(&changes, Some((600, 1_000))),
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    let second = first + Duration::microseconds(2);
    assert_eq!(done.heads[0].last_sequence, 4);
    assert_eq!(
        done.heads[0].last_posted_micros,
        Some(second.timestamp_micros() + 1)
    );
    assert!(done.counted);
    assert_eq!(
        totals().await,
        [
            ("2026-03-01".to_owned(), 300),
            ("2026-03-02".to_owned(), 600)
        ]
    );
    assert_eq!(balance(&w.main_id).await, (100, second));

    // Over the day's limit: counted no, and no balance moves.
    let changes = pay(50);
    let mut tx = db.pool.inner().begin().await.unwrap();
    let done = ledger::advance_and_move(
        &mut tx,
        &businesses,
        second,
        &money(&changes, Some((500, 1_000))),
    )
    .await
    .unwrap();
    assert!(!done.counted);
    assert!(done.moved.is_empty());
    tx.rollback().await.unwrap();

    // Not counted (a hold), and more than the balance: the debit is left out.
    let changes = pay(5_000);
    let mut tx = db.pool.inner().begin().await.unwrap();
    let done = ledger::advance_and_move(&mut tx, &businesses, second, &money(&changes, None))
        .await
        .unwrap();
    assert!(done.counted);
    assert_eq!(done.moved, std::slice::from_ref(&w.current_id));
    tx.rollback().await.unwrap();
    assert_eq!(balance(&w.main_id).await.0, 100);

    // The business deactivated: read (under its share lock) as it now is, nothing counted
    // and no balance moved.
    sqlx::query("UPDATE businesses SET status = 'inactive' WHERE id = $1::uuid")
        .bind(&w.business_id)
        .execute(db.pool.inner())
        .await
        .unwrap();
    let changes = pay(50);
    let mut tx = db.pool.inner().begin().await.unwrap();
    let done = ledger::advance_and_move(
        &mut tx,
        &businesses,
        second,
        &money(&changes, Some((50, 1_000))),
    )
    .await
    .unwrap();
    assert_eq!(done.business, Some((false, 1_000)));
    assert!(!done.counted);
    assert!(done.moved.is_empty());
    tx.rollback().await.unwrap();
    db.finish().await;
}
