//! `customers`: a business's customers, each verified by BVN or NIN (kept as salted hashes)
//! and holding one virtual account.

use crate::{id, new_id, StoreError, Tx};
pub use kobo_store::customers::{Contact, Identity, NewCustomer};

kobo_store::customers_functions!(backend crate::Backend);

impl kobo_store::customers::Customers for crate::Backend {
    async fn insert(tx: &mut Tx, new: &NewCustomer<'_>) -> Result<(), StoreError> {
        sqlx::query!(
            "INSERT INTO customers (id, business_id, email, phone, bvn_hash, nin_hash, \
           verified_identities, verified_name, metadata, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            new_id(new.id)?,
            new_id(new.business_id)?,
            new.email,
            new.phone,
            new.bvn_hash,
            new.nin_hash,
            new.verified_identities,
            new.verified_name,
            new.metadata,
            new.created_at
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn account_number_of(
        tx: &mut Tx,
        business_id: &str,
        kind: Identity,
        hash: &str,
    ) -> Result<Option<String>, StoreError> {
        let business_id = id(business_id);
        Ok(match kind {
            Identity::Bvn => {
                sqlx::query_scalar!(
                "SELECT a.account_number FROM customers c JOIN accounts a ON a.customer_id = c.id \
                 WHERE c.business_id = $1 AND c.bvn_hash = $2",
                business_id,
                hash
            )
                .fetch_optional(&mut **tx)
                .await?
            }
            Identity::Nin => {
                sqlx::query_scalar!(
                "SELECT a.account_number FROM customers c JOIN accounts a ON a.customer_id = c.id \
                 WHERE c.business_id = $1 AND c.nin_hash = $2",
                business_id,
                hash
            )
                .fetch_optional(&mut **tx)
                .await?
            }
        })
    }

    async fn contact(conn: Self::Conn<'_>, id: &str) -> Result<Option<Contact>, StoreError> {
        conn.run(async |conn| {
            Ok(sqlx::query_as!(
                Contact,
                "SELECT email, phone, verified_identities, metadata FROM customers WHERE id = $1",
                crate::id(id)
            )
            .fetch_optional(&mut *conn)
            .await?)
        })
        .await
    }
}
