//! `customers`: a business's customers, each verified by BVN or NIN (kept as salted hashes)
//! and holding one virtual account.

use super::{Conn, StoreError, Tx};
use crate::kernel::store;
pub use kobo_store::customers::{Contact, Identity, NewCustomer};

pub async fn insert(tx: &mut Tx, new: &NewCustomer<'_>) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO customers (id, business_id, email, phone, bvn_hash, nin_hash, \
           verified_identities, verified_name, metadata, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(new.id)
    .bind(new.business_id)
    .bind(new.email)
    .bind(new.phone)
    .bind(new.bvn_hash)
    .bind(new.nin_hash)
    .bind(new.verified_identities)
    .bind(new.verified_name)
    .bind(new.metadata)
    .bind(store::timestamp(new.created_at))
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The number of the account of the business's customer whose identity of `kind` hashes to
/// `hash`, if there is one.
pub async fn account_number_of(
    tx: &mut Tx,
    business_id: &str,
    kind: Identity,
    hash: &str,
) -> Result<Option<String>, StoreError> {
    let column = match kind {
        Identity::Bvn => "bvn_hash",
        Identity::Nin => "nin_hash",
    };
    let sql = format!(
        "SELECT a.account_number FROM customers c JOIN accounts a ON a.customer_id = c.id \
         WHERE c.business_id = $1 AND c.{column} = $2"
    );
    Ok(sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
        .bind(business_id)
        .bind(hash)
        .fetch_optional(&mut **tx)
        .await?)
}

pub async fn contact(conn: impl Into<Conn<'_>>, id: &str) -> Result<Option<Contact>, StoreError> {
    let query = sqlx::query(
        "SELECT email, phone, verified_identities, metadata FROM customers WHERE id = $1",
    )
    .bind(id.to_owned());
    let row = conn.into().fetch_optional(query).await?;
    row.map(|row| {
        Ok(Contact {
            email: store::optional_text(&row, "email")?,
            phone: store::optional_text(&row, "phone")?,
            verified_identities: store::text(&row, "verified_identities")?,
            metadata: store::text(&row, "metadata")?,
        })
    })
    .transpose()
}
