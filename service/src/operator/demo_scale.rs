//! The demo business at a real business's scale (`kobo demo --demo-customer-accounts N`,
//! issue 59): N verified customers, each with a virtual account under the main account, opened
//! in bulk at start (a hundred to a transaction) through the same code as
//! `create_customer_account`, without the provider's round trips or N API calls. What the
//! Dashboard's browser test pays among, and what a person can try the Dashboard with.

use anyhow::Result;
use generated_server::ResponseCode;

use crate::error::OrInternal;
use crate::kernel::clock::Clock;
use crate::kernel::store::Store;
use crate::money::accounts::{self, CustomerOpening};
use crate::platform::business;
use crate::provider::IdentityNumbers;

/// First names of the seeded customers: with [`LAST_NAMES`], 1,600 different people.
const FIRST_NAMES: [&str; 40] = [
    "Adaobi",
    "Babajide",
    "Chiamaka",
    "Damilola",
    "Ebuka",
    "Folake",
    "Gbenga",
    "Halima",
    "Ifeoma",
    "Jide",
    "Kelechi",
    "Lola",
    "Musa",
    "Nneka",
    "Obinna",
    "Papa",
    "Quadri",
    "Rukayat",
    "Segun",
    "Temitope",
    "Uche",
    "Victoria",
    "Wale",
    "Yetunde",
    "Zainab",
    "Aisha",
    "Bola",
    "Chidi",
    "Dayo",
    "Emeka",
    "Funmi",
    "Garba",
    "Hauwa",
    "Ikenna",
    "Jumoke",
    "Kunle",
    "Lami",
    "Mojisola",
    "Nkechi",
    "Oluwaseun",
];

/// Last names of the seeded customers.
const LAST_NAMES: [&str; 40] = [
    "Adebayo", "Bello", "Chukwu", "Danjuma", "Eze", "Fashola", "Garba", "Hassan", "Igwe",
    "Johnson", "Kalu", "Lawal", "Mohammed", "Nwankwo", "Okoro", "Peters", "Quadri", "Ribadu",
    "Salami", "Tijani", "Udeh", "Vincent", "Wike", "Yusuf", "Zubair", "Abiodun", "Balogun",
    "Coker", "Dike", "Ekwueme", "Fagbemi", "Gowon", "Ibekwe", "Jaja", "Kuti", "Lemboye", "Mbah",
    "Nnamdi", "Ogunleye", "Soyinka",
];

/// Customers opened per transaction.
const BATCH: u32 = 100;

/// The name of the `n`th seeded customer (from 0): every pair of names once, then again.
pub fn customer_name(n: u32) -> String {
    let first = FIRST_NAMES[(n % 40) as usize];
    let last = LAST_NAMES[((n / 40) % 40) as usize];
    format!("{first} {last}")
}

/// The BVN of the `n`th seeded customer: `23` and nine digits, never one of the sandbox's
/// documented test identities.
fn bvn(n: u32) -> String {
    format!("23{n:09}")
}

/// Opens the business's seeded customer accounts numbered `0..count` that it does not have
/// yet (a second start finds them and opens none). Returns how many it opened.
pub async fn seed_customer_accounts(
    store: &Store,
    clock: &Clock,
    business_id: &str,
    count: u32,
) -> Result<u32> {
    let mut opened = 0;
    let metadata = serde_json::Map::new();
    let mut n = 0;
    while n < count {
        let mut tx = store.begin().await?;
        business::lock_business(&mut tx, business_id).await?;
        let now = clock.now();
        for n in n..count.min(n + BATCH) {
            let name = customer_name(n);
            let numbers = IdentityNumbers {
                bvn: Some(bvn(n)),
                nin: None,
            };
            let email = format!("{}.{n}@example.ng", name.to_lowercase().replace(' ', "."));
            let opening = CustomerOpening {
                business_id,
                numbers: &numbers,
                verified_name: &name,
                account_name: &name,
                email: Some(&email),
                phone: None,
                metadata: &metadata,
                parent_account_number: None,
            };
            match accounts::open_customer_account(&mut tx, &opening, now).await {
                Ok(_) => opened += 1,
                // Seeded by an earlier start.
                Err(error) if error.code() == ResponseCode::Duplicate => {}
                Err(error) => return Err(anyhow::anyhow!("{}", error.message())),
            }
        }
        tx.commit().await.or_internal()?;
        n = count.min(n + BATCH);
    }
    Ok(opened)
}
