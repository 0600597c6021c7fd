//! `customers`: a business's customers, each verified by BVN or NIN (kept as salted hashes)
//! and holding one virtual account.

use chrono::{DateTime, Utc};

use super::{Conn, StoreError, Tx};
use crate::kernel::store;

/// A customer to record.
#[derive(Clone, Copy, Debug)]
pub struct NewCustomer<'a> {
    pub id: &'a str,
    pub business_id: &'a str,
    pub email: Option<&'a str>,
    pub phone: Option<&'a str>,
    pub bvn_hash: Option<&'a str>,
    pub nin_hash: Option<&'a str>,
    /// JSON: the identities verified (`["bvn", "nin"]`).
    pub verified_identities: &'a str,
    pub verified_name: &'a str,
    /// JSON: the business's metadata object.
    pub metadata: &'a str,
    pub created_at: DateTime<Utc>,
}

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

/// An identity number's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Identity {
    Bvn,
    Nin,
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

/// A customer's contact and what was verified, as an account shows them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contact {
    pub email: Option<String>,
    pub phone: Option<String>,
    /// JSON, as stored.
    pub verified_identities: String,
    /// JSON, as stored.
    pub metadata: String,
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
