//! Provisioning businesses: what the operator's command line does, with no HTTP surface.
//!
//! [`create`] makes, in one transaction, the business with its integration credentials, its
//! owner and its main pool account. [`ensure_demo`] gives `kobo demo` a business whose
//! credentials it can print.

use anyhow::{bail, Context, Result};
use chrono::{DateTime, Utc};

use crate::datastore::accounts as stored_accounts;
use crate::datastore::businesses::{self, Business, NewBusiness as StoredBusiness};
use crate::datastore::members::{self, NewMember};
use crate::error::OrInternal;
use crate::kernel::clock::Clock;
use crate::kernel::config::{Config, Environment};
use crate::kernel::secrets::{self, Passwords};
use crate::kernel::store::{self, Store, Tx};
use crate::money::amount::Kobo;
use crate::money::nuban::{self, Series};
use crate::money::{accounts, inbound, transactions};
use crate::platform::business::{
    client_id_for, environment_of_client_id, new_client_secret, normalize_email,
    rotate_client_secret,
};
use crate::platform::permissions::OWNER_ROLE_ID;
use crate::platform::{identity, team, throttle};
use crate::provider::sandbox::SandboxProvider;
use crate::provider::{CoreBanking, IdentityNumbers};

/// What the operator gives to create a business.
#[derive(Clone, Debug)]
pub struct NewBusiness {
    pub name: String,
    pub owner_email: String,
    pub owner_first_name: String,
    pub owner_last_name: String,
    /// With a password the owner is active at once; without, they are invited by email (the
    /// invitation token is also returned, for the operator to pass on).
    pub owner_password: Option<String>,
    /// `false` creates the business inactive (`60` on money-moving operations until
    /// [`set_status`] activates it).
    pub active: bool,
    /// Fixed ids for reproducible demo data; `None` draws random ones.
    pub business_id: Option<uuid::Uuid>,
    pub owner_id: Option<uuid::Uuid>,
}

/// What [`create`] made. `client_secret` and `invitation_token` exist only here: the store
/// keeps their hashes.
#[derive(Clone, Debug)]
pub struct CreatedBusiness {
    pub business_id: String,
    pub name: String,
    pub environment: Environment,
    pub active: bool,
    pub client_id: String,
    pub client_secret: String,
    pub owner_id: String,
    pub owner_email: String,
    /// The owner's password when one was given (the demo prints it).
    pub owner_password: Option<String>,
    /// The invitation token when the owner was invited instead.
    pub invitation_token: Option<String>,
    /// The NUBAN of the main pool account.
    pub main_account_number: String,
}

/// A business as the operator lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BusinessRecord {
    pub id: String,
    pub name: String,
    pub active: bool,
    pub environment: Environment,
    pub client_id: String,
    pub created_at: DateTime<Utc>,
}

/// Creates a business of `config.environment` with its owner and main pool account.
pub async fn create(
    store: &Store,
    config: &Config,
    clock: &Clock,
    new: NewBusiness,
) -> Result<CreatedBusiness> {
    let owner = checked_owner(config, &new).await?;
    let name = new.name.trim().to_owned();
    if name.is_empty() || name.chars().count() > 200 {
        bail!("the business name must have 1 to 200 characters");
    }
    let business_id = new
        .business_id
        .unwrap_or_else(uuid::Uuid::new_v4)
        .to_string();
    let owner_id = new.owner_id.unwrap_or_else(uuid::Uuid::new_v4).to_string();
    let client_id = client_id_for(config.environment, &business_id);
    let client_secret = new_client_secret(config.environment);
    let now = clock.now();

    let client_secret_hash = secrets::sha256_hex(&client_secret);
    let business = StoredBusiness {
        id: &business_id,
        name: &name,
        status: status_text(new.active),
        client_id: &client_id,
        client_secret_hash: &client_secret_hash,
    };
    let mut tx = store.begin().await?;
    businesses::insert(&mut tx, &business, now)
        .await
        .or_internal()
        .context("cannot store the business")?;
    let invitation_token =
        insert_owner(&mut tx, config, &business_id, &name, &owner_id, &owner, now).await?;
    let main_account_number = insert_main_account(&mut tx, &business_id, &name, now).await?;
    tx.commit().await.or_internal()?;

    Ok(CreatedBusiness {
        business_id,
        name,
        environment: config.environment,
        active: new.active,
        client_id,
        client_secret,
        owner_id,
        owner_email: owner.email,
        owner_password: new.owner_password,
        invitation_token,
        main_account_number,
    })
}

/// A new business's owner, checked: the email, the names, the password's hash (none: the owner
/// is invited).
struct Owner {
    email: String,
    first_name: String,
    last_name: String,
    password_hash: Option<String>,
}

async fn checked_owner(config: &Config, new: &NewBusiness) -> Result<Owner> {
    let email = normalize_email(&new.owner_email)
        .with_context(|| format!("{:?} is not an email address", new.owner_email))?;
    for (what, value) in [
        ("first name", &new.owner_first_name),
        ("last name", &new.owner_last_name),
    ] {
        let length = value.trim().chars().count();
        if length == 0 || length > 100 {
            bail!("the owner's {what} must have 1 to 100 characters");
        }
    }
    let password_hash = match &new.owner_password {
        Some(password) => {
            secrets::check_password_rules("owner_password", password)?;
            Some(Passwords::new(&config.passwords).hash(password).await?)
        }
        None => None,
    };
    Ok(Owner {
        email,
        first_name: new.owner_first_name.trim().to_owned(),
        last_name: new.owner_last_name.trim().to_owned(),
        password_hash,
    })
}

/// The owner's membership, in `tx`: active with their password, or invited (the invitation's
/// token is returned).
async fn insert_owner(
    tx: &mut Tx,
    config: &Config,
    business_id: &str,
    business_name: &str,
    owner_id: &str,
    owner: &Owner,
    now: DateTime<Utc>,
) -> Result<Option<String>> {
    let member = NewMember {
        id: owner_id,
        business_id,
        email: &owner.email,
        first_name: &owner.first_name,
        last_name: &owner.last_name,
        role_id: OWNER_ROLE_ID,
    };
    members::insert_first(tx, &member, owner.password_hash.as_deref(), now)
        .await
        .or_internal()
        .context("cannot store the owner")?;
    if owner.password_hash.is_some() {
        return Ok(None);
    }
    let invitee = team::Invitee {
        business_id,
        business_name,
        member_id: owner_id,
        email: &owner.email,
        first_name: &owner.first_name,
        role_name: "Owner",
    };
    Ok(Some(team::invite(tx, config, now, &invitee).await?))
}

/// The business's main pool account, named as the business, in `tx`; returns its number.
async fn insert_main_account(
    tx: &mut Tx,
    business_id: &str,
    name: &str,
    now: DateTime<Utc>,
) -> Result<String> {
    let number = nuban::next_account_number(tx, Series::Business).await?;
    let id = store::new_id();
    stored_accounts::insert_main(tx, &id, business_id, &number, name, now)
        .await
        .or_internal()
        .context("cannot store the main account")?;
    Ok(number)
}

/// Activates or deactivates a business (by id or `client_id`).
pub async fn set_status(
    store: &Store,
    clock: &Clock,
    id_or_client_id: &str,
    active: bool,
) -> Result<()> {
    let updated = businesses::set_status(store, id_or_client_id, status_text(active), clock.now())
        .await
        .context("cannot update the business")?;
    if updated == 0 {
        bail!("no business has the id or client_id {id_or_client_id:?}");
    }
    Ok(())
}

/// Sets a business's daily transfer limit in kobo (`None`: the configured default again).
pub async fn set_daily_transfer_limit(
    store: &Store,
    id_or_client_id: &str,
    limit: Option<i64>,
) -> Result<()> {
    let updated = businesses::set_daily_transfer_limit(store, id_or_client_id, limit)
        .await
        .context("cannot update the business")?;
    if updated == 0 {
        bail!("no business has the id or client_id {id_or_client_id:?}");
    }
    Ok(())
}

/// The business with this id or `client_id`.
pub async fn find(store: &Store, id_or_client_id: &str) -> Result<Option<BusinessRecord>> {
    let found = businesses::find(store, id_or_client_id).await?;
    Ok(found.map(business_record))
}

/// Every business, oldest first.
pub async fn list(store: &Store) -> Result<Vec<BusinessRecord>> {
    let all = businesses::list(store).await?;
    Ok(all.into_iter().map(business_record).collect())
}

/// The status a business is stored with.
fn status_text(active: bool) -> &'static str {
    if active {
        "active"
    } else {
        "inactive"
    }
}

fn business_record(business: Business) -> BusinessRecord {
    BusinessRecord {
        active: business.status == "active",
        environment: environment_of_client_id(&business.client_id),
        id: business.id,
        name: business.name,
        client_id: business.client_id,
        created_at: business.created_at,
    }
}

/// The demo business of `kobo demo`: Adaeze Foods Ltd, with the ids and credentials of the
/// spec's examples where they are not secret.
pub const DEMO_BUSINESS_ID: &str = "5b6f8a52-3c1e-4d2b-9a7f-1e2d3c4b5a60";
pub const DEMO_OWNER_ID: &str = "7c9e6679-7425-40de-944b-e07fc1f90ae7";
pub const DEMO_OWNER_EMAIL: &str = "adaeze.okafor@adaezefoods.ng";
pub const DEMO_OWNER_PASSWORD: &str = "Jollof-Rice-2026";

/// A little history for a newcomer to see: Chinedu Obi's virtual account (the sandbox's first
/// test BVN, verified through the sandbox provider) and three inbound credits, posted through
/// the ledger exactly as real ones.
async fn seed_demo_history(
    store: &Store,
    config: &Config,
    clock: &Clock,
    business: &CreatedBusiness,
) -> Result<()> {
    let numbers = IdentityNumbers {
        bvn: Some("22212345678".into()),
        nin: None,
    };
    let verified = SandboxProvider::new(clock.clone())
        .verify_identity(&numbers)
        .await
        .map_err(|error| anyhow::anyhow!("the sandbox provider refused the demo BVN: {error:?}"))?;
    let metadata = serde_json::Map::from_iter([(
        "customer_ref".to_owned(),
        serde_json::Value::from("CUST-00042"),
    )]);
    let now = clock.now();
    let mut tx = store.begin().await?;
    let customer = accounts::open_customer_account(
        &mut tx,
        &accounts::CustomerOpening {
            business_id: &business.business_id,
            numbers: &numbers,
            verified_name: &verified.name,
            account_name: &verified.name,
            email: Some("chinedu.obi@example.ng"),
            phone: Some("08031234567"),
            metadata: &metadata,
            parent_account_number: None,
        },
        now,
    )
    .await?;
    let credits = [
        (
            &business.main_account_number,
            "2450000",
            "Lagos Fresh Produce Ltd",
            "0690000036",
            "000013",
            "Invoice 88 - December supplies",
        ),
        (
            &customer.account_number,
            "15000",
            "Emeka Nwosu",
            "0123456788",
            "000013",
            "Payment for order 1042",
        ),
        (
            &customer.account_number,
            "7500.50",
            "Emeka Nwosu",
            "0123456788",
            "000013",
            "Payment for order 1043",
        ),
    ];
    for (account_number, amount, name, number, bank_code, narration) in credits {
        let credit = inbound::InboundCredit {
            session_id: None,
            account_number: account_number.clone(),
            amount: Kobo::parse(amount).context("a demo amount")?,
            narration: narration.into(),
            originator: transactions::Originator {
                account_number: number.into(),
                account_name: name.into(),
                bank_code: bank_code.into(),
                bank_name: inbound::bank_name(bank_code),
            },
            environment: config.environment,
        };
        inbound::post_credit(&mut tx, &business.business_id, &credit, now).await?;
    }
    tx.commit().await.or_internal()?;
    Ok(())
}

/// What [`ensure_demo`] found or made.
#[derive(Clone, Debug)]
pub struct DemoBusiness {
    /// True on the first run, when the business was created.
    pub created: bool,
    pub business: CreatedBusiness,
}

/// Creates the demo business on the first run; on later runs reuses it and makes what is
/// printed true again: the owner's password is reset to [`DEMO_OWNER_PASSWORD`] (and the
/// owner reactivated, their login throttle cleared), and a new client secret is issued, since
/// only the hash of the old one is stored (integration tokens of the previous run stop
/// working). Sandbox only.
pub async fn ensure_demo(store: &Store, config: &Config, clock: &Clock) -> Result<DemoBusiness> {
    if config.environment != Environment::Sandbox {
        bail!("the demo business exists in the sandbox only");
    }
    let existing = find(store, DEMO_BUSINESS_ID).await?;
    let Some(existing) = existing else {
        let business = create(
            store,
            config,
            clock,
            NewBusiness {
                name: "Adaeze Foods Ltd".into(),
                owner_email: DEMO_OWNER_EMAIL.into(),
                owner_first_name: "Adaeze".into(),
                owner_last_name: "Okafor".into(),
                owner_password: Some(DEMO_OWNER_PASSWORD.into()),
                active: true,
                business_id: Some(DEMO_BUSINESS_ID.parse()?),
                owner_id: Some(DEMO_OWNER_ID.parse()?),
            },
        )
        .await?;
        seed_demo_history(store, config, clock, &business).await?;
        return Ok(DemoBusiness {
            created: true,
            business,
        });
    };

    let password_hash = Passwords::new(&config.passwords)
        .hash(DEMO_OWNER_PASSWORD)
        .await?;
    let now = clock.now();
    let mut tx = store.begin().await?;
    let (client_id, client_secret) = rotate_client_secret(&mut tx, &existing.id, None, now).await?;
    let reset = members::restore(&mut tx, DEMO_OWNER_ID, &existing.id, &password_hash, now)
        .await
        .or_internal()?;
    if !reset {
        bail!(
            "the demo business has lost its owner {DEMO_OWNER_EMAIL}: use a fresh data directory"
        );
    }
    throttle::forget_credential(&mut tx, &identity::login_credential(DEMO_OWNER_EMAIL)).await?;
    let main_account_number = stored_accounts::main_account_number(&mut tx, &existing.id)
        .await
        .or_internal()?
        .context("the demo business has no main account")?;
    tx.commit().await.or_internal()?;
    Ok(DemoBusiness {
        created: false,
        business: CreatedBusiness {
            business_id: existing.id,
            name: existing.name,
            environment: existing.environment,
            active: existing.active,
            client_id,
            client_secret,
            owner_id: DEMO_OWNER_ID.into(),
            owner_email: DEMO_OWNER_EMAIL.into(),
            owner_password: Some(DEMO_OWNER_PASSWORD.into()),
            invitation_token: None,
            main_account_number,
        },
    })
}
