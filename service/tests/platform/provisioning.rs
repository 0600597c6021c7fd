//! The operator's provisioning API (`kobo::operator::businesses`) and the demo business.

use generated_server::{Operation, ResponseCode};
use kobo::money::nuban;
use kobo::on_both_stores;
use kobo::operator::businesses::{self, NewBusiness, DEMO_OWNER_EMAIL, DEMO_OWNER_PASSWORD};
use kobo::platform::housekeeping::{purge_expired, Purged, GRACE_HOURS};
use kobo::testkit::{Call, TestKit, MEMBER_PASSWORD};
use serde_json::json;

fn new_business(email: &str, password: Option<&str>) -> NewBusiness {
    NewBusiness {
        name: "Lagos Fresh Produce Ltd".into(),
        owner_email: email.into(),
        owner_first_name: "Bisi".into(),
        owner_last_name: "Alade".into(),
        owner_password: password.map(Into::into),
        active: true,
        business_id: None,
        owner_id: None,
    }
}

async fn a_business_starts_with_credentials_an_owner_and_a_pool_account(kit: TestKit) {
    let created = &kit.business;
    assert!(created.client_id.starts_with("kb_sandbox_"));
    assert_eq!(created.client_id.len(), "kb_sandbox_".len() + 12);
    assert!(created.client_secret.starts_with("kbs_sandbox_"));
    assert!(nuban::is_valid(
        nuban::BANK_CODE,
        &created.main_account_number
    ));
    let pool: i64 = kit
        .count(
            "SELECT COUNT(*) FROM accounts WHERE business_id = $1 AND account_type = 'pool' \
             AND account_class = 'primary' AND status = 'active'",
            &created.business_id,
        )
        .await;
    assert_eq!(pool, 1);

    // A second business gets the next number; an invited owner gets an email with a token.
    let invited = businesses::create(
        &kit.store,
        kit.api.config(),
        &kit.clock,
        new_business("bisi@lagosfresh.ng", None),
    )
    .await
    .unwrap();
    assert_ne!(invited.main_account_number, created.main_account_number);
    assert!(nuban::is_valid(
        nuban::BANK_CODE,
        &invited.main_account_number
    ));
    let token = invited.invitation_token.clone().expect("an invitation");
    assert_eq!(kit.invitation_token("bisi@lagosfresh.ng").await, token);
    kit.send(Call::new(
        Operation::AcceptInvite.path(),
        None,
        json!({"token": token, "password": MEMBER_PASSWORD, "confirm_password": MEMBER_PASSWORD}),
    ))
    .await
    .expect(ResponseCode::Success);
    let owner = kit.login("bisi@lagosfresh.ng", MEMBER_PASSWORD).await;
    let profile = kit.op(Operation::GetProfile, &owner, json!({})).await;
    assert_eq!(
        profile.expect(ResponseCode::Success)["role"]["name"],
        "Owner"
    );

    // One person may own several businesses, each membership with its own password.
    businesses::create(
        &kit.store,
        kit.api.config(),
        &kit.clock,
        new_business("bisi@lagosfresh.ng", Some("Another-Password-9")),
    )
    .await
    .unwrap();
    kit.login("bisi@lagosfresh.ng", "Another-Password-9").await;

    // Refusals leave nothing behind.
    let short = businesses::create(
        &kit.store,
        kit.api.config(),
        &kit.clock,
        new_business("new@lagosfresh.ng", Some("short")),
    )
    .await;
    assert!(short.is_err());
    assert_eq!(businesses::list(&kit.store).await.unwrap().len(), 3);
}

async fn businesses_are_listed_found_and_deactivated(kit: TestKit) {
    let id = kit.business.business_id.clone();
    let found = businesses::find(&kit.store, &kit.business.client_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.id, id);
    assert!(found.active);
    businesses::set_status(&kit.store, &kit.clock, &id, false)
        .await
        .unwrap();
    let profile = kit
        .op(Operation::GetProfile, &kit.owner_token, json!({}))
        .await;
    assert_eq!(
        profile.expect(ResponseCode::Success)["business"]["status"],
        "inactive"
    );
    assert!(
        businesses::set_status(&kit.store, &kit.clock, "no-such-business", true)
            .await
            .is_err()
    );
    assert!(businesses::find(&kit.store, "no-such-business")
        .await
        .unwrap()
        .is_none());
}

async fn the_demo_business_is_created_once_and_its_credentials_renewed(kit: TestKit) {
    // The kit's own business uses the demo owner's email; the demo needs a store without it.
    kit.sql("UPDATE members SET email = 'kit.owner@adaezefoods.ng' WHERE email = $1")
        .bind(DEMO_OWNER_EMAIL)
        .execute()
        .await;
    let first = businesses::ensure_demo(&kit.store, kit.api.config(), &kit.clock)
        .await
        .unwrap();
    assert!(first.created);
    assert_eq!(first.business.client_id, "kb_sandbox_5b6f8a523c1e");
    assert_eq!(first.business.main_account_number, "1000000021");
    let token = kit.login(DEMO_OWNER_EMAIL, DEMO_OWNER_PASSWORD).await;
    kit.op(
        Operation::ChangePassword,
        &token,
        json!({"old_password": DEMO_OWNER_PASSWORD, "new_password": "Something-Else-1",
               "confirm_password": "Something-Else-1"}),
    )
    .await
    .expect(ResponseCode::Success);

    let second = businesses::ensure_demo(&kit.store, kit.api.config(), &kit.clock)
        .await
        .unwrap();
    assert!(!second.created);
    assert_eq!(second.business.business_id, first.business.business_id);
    assert_eq!(second.business.main_account_number, "1000000021");
    assert_ne!(second.business.client_secret, first.business.client_secret);
    // What the demo prints works again.
    kit.login(DEMO_OWNER_EMAIL, DEMO_OWNER_PASSWORD).await;
    kit.integration_token_of(&second.business).await;
    let old = kit
        .send(Call::new(
            Operation::GenerateToken.path(),
            None,
            json!({"client_id": first.business.client_id,
                   "client_secret": first.business.client_secret}),
        ))
        .await;
    old.expect(ResponseCode::Unauthenticated);
}

on_both_stores!(
    a_business_starts_with_credentials_an_owner_and_a_pool_account,
    businesses_are_listed_found_and_deactivated,
    the_demo_business_is_created_once_and_its_credentials_renewed,
);

/// Housekeeping deletes finished sessions, OTPs, throttles and keys, and nothing live.
async fn housekeeping_keeps_only_what_can_still_matter(kit: TestKit) {
    let second = kit
        .login(
            "adaeze.okafor@adaezefoods.ng",
            kobo::testkit::OWNER_PASSWORD,
        )
        .await;
    kit.op(Operation::GenerateOtp, &second, json!({}))
        .await
        .expect(ResponseCode::Success);
    kit.send(Call::new(
        Operation::Login.path(),
        None,
        json!({"email": "nobody@adaezefoods.ng", "password": "wrong-password"}),
    ))
    .await
    .expect(ResponseCode::Unauthenticated);
    let nothing = purge_expired(&kit.store, kit.clock.now()).await.unwrap();
    assert_eq!(nothing, Purged::default());

    // A day and a half later both sessions, the OTP and the failed login's throttles are
    // finished and past their grace; a session opened now is live and stays.
    kit.clock
        .advance(chrono::Duration::hours(12 + GRACE_HOURS + 1));
    let fresh = kit
        .login(
            "adaeze.okafor@adaezefoods.ng",
            kobo::testkit::OWNER_PASSWORD,
        )
        .await;
    let purged = purge_expired(&kit.store, kit.clock.now()).await.unwrap();
    assert_eq!(purged.sessions, 2);
    assert_eq!(purged.otps, 1);
    assert_eq!(purged.throttles, 2);
    kit.op(Operation::GetProfile, &fresh, json!({}))
        .await
        .expect(ResponseCode::Success);
}

on_both_stores!(housekeeping_keeps_only_what_can_still_matter);
