//! `accounts`: every customer-facing account (the business's main pool account, its current
//! accounts, its customers' virtual accounts), each with its stored balance.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use kobo_store::idempotency_keys::StoredKey;
use kobo_store::paging::Cursor;

use crate::Pool;
use crate::{id, new_id, new_opt_id, sums, text_ids, StoreError, Tx};
pub use kobo_store::accounts::{
    AccountRow, Activity, BalanceChange, CurrentAccountFacts, Filters, KoboAccount, Metrics,
    MetricsFilters, NewAccount, PayoutLookup, PayoutRead,
};

/// An account read with its business (`KoboAccount`'s columns, flat).
struct AccountWithBusiness {
    id: String,
    account_number: String,
    account_name: String,
    account_type: String,
    account_class: String,
    status: String,
    balance: i64,
    last_balance_update: Option<DateTime<Utc>>,
    parent_account_number: Option<String>,
    customer_id: Option<String>,
    created_at: DateTime<Utc>,
    business_id: String,
    business_name: String,
}

impl From<AccountWithBusiness> for KoboAccount {
    fn from(row: AccountWithBusiness) -> KoboAccount {
        KoboAccount {
            account: AccountRow {
                id: row.id,
                account_number: row.account_number,
                account_name: row.account_name,
                account_type: row.account_type,
                account_class: row.account_class,
                status: row.status,
                balance: row.balance,
                last_balance_update: row.last_balance_update,
                parent_account_number: row.parent_account_number,
                customer_id: row.customer_id,
                created_at: row.created_at,
            },
            business_id: row.business_id,
            business_name: row.business_name,
        }
    }
}

kobo_store::accounts_functions!(backend crate::Backend);

impl kobo_store::accounts::Accounts for crate::Backend {
    async fn find_by_id(conn: Self::Conn<'_>, id: &str) -> Result<Option<AccountRow>, StoreError> {
        conn.run(async |conn| {
            Ok(sqlx::query_as!(
                AccountRow,
                r#"SELECT a.id::text AS "id!", a.account_number, a.account_name, a.account_type,
           a.account_class, a.status, a.balance, a.last_balance_update,
           p.account_number AS "parent_account_number?", a.customer_id::text AS customer_id,
           a.created_at
         FROM accounts a LEFT JOIN accounts p ON p.id = a.parent_account_id
         WHERE a.id = $1"#,
                crate::id(id)
            )
            .fetch_optional(&mut *conn)
            .await?)
        })
        .await
    }

    /// By the number alone, whose only index is its unique one, so PostgreSQL's kept plan cannot
    /// take another: with the business in the `WHERE` too, a plan made while the business had few
    /// accounts could read them all through `accounts_business_created` (see
    /// [`crate::transfers::reference_owner`]), and the lookup had to be planned on every call.
    async fn find_by_number_anywhere(
        conn: Self::Conn<'_>,
        number: &str,
    ) -> Result<Option<KoboAccount>, StoreError> {
        conn.run(async |conn| {
            let row = sqlx::query_as!(
                AccountWithBusiness,
                r#"SELECT a.id::text AS "id!", a.account_number, a.account_name, a.account_type,
           a.account_class, a.status, a.balance, a.last_balance_update,
           p.account_number AS "parent_account_number?", a.customer_id::text AS customer_id,
           a.created_at, a.business_id::text AS "business_id!", o.name AS business_name
         FROM accounts a LEFT JOIN accounts p ON p.id = a.parent_account_id
         JOIN businesses o ON o.id = a.business_id
         WHERE a.account_number = $1"#,
                number
            )
            .fetch_optional(&mut *conn)
            .await?;
            Ok(row.map(KoboAccount::from))
        })
        .await
    }

    async fn main_account(
        tx: &mut Tx,
        business_id: &str,
    ) -> Result<Option<AccountRow>, StoreError> {
        Ok(sqlx::query_as!(
            AccountRow,
            r#"SELECT a.id::text AS "id!", a.account_number, a.account_name, a.account_type,
           a.account_class, a.status, a.balance, a.last_balance_update,
           p.account_number AS "parent_account_number?", a.customer_id::text AS customer_id,
           a.created_at
         FROM accounts a LEFT JOIN accounts p ON p.id = a.parent_account_id
         WHERE a.business_id = $1 AND a.account_class = 'primary'"#,
            id(business_id)
        )
        .fetch_optional(&mut **tx)
        .await?)
    }

    async fn current_account_facts(
        tx: &mut Tx,
        business_id: &str,
    ) -> Result<CurrentAccountFacts, StoreError> {
        Ok(sqlx::query_as!(
            CurrentAccountFacts,
            r#"SELECT b.name AS business_name,
           (SELECT COUNT(*) FROM accounts c WHERE c.business_id = b.id
              AND c.account_type = 'current') AS "current_accounts!",
           (SELECT m.id::text FROM accounts m WHERE m.business_id = b.id
              AND m.account_class = 'primary') AS main_account_id
         FROM businesses b WHERE b.id = $1"#,
            id(business_id)
        )
        .fetch_one(&mut **tx)
        .await?)
    }

    async fn insert(tx: &mut Tx, new: &NewAccount<'_>) -> Result<(), StoreError> {
        sqlx::query!(
            "INSERT INTO accounts (id, business_id, account_number, account_name, account_type, \
           account_class, status, parent_account_id, customer_id, balance, last_balance_update, \
           created_at, updated_at) \
         VALUES ($1, $2, $3, $4, $5, 'secondary', 'active', $6, $7, 0, NULL, $8, $8)",
            new_id(new.id)?,
            new_id(new.business_id)?,
            new.account_number,
            new.account_name,
            new.account_type,
            new_id(new.parent_account_id)?,
            new_opt_id(new.customer_id)?,
            new.created_at
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn insert_main(
        tx: &mut Tx,
        id: &str,
        business_id: &str,
        account_number: &str,
        account_name: &str,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        sqlx::query!(
            "INSERT INTO accounts (id, business_id, account_number, account_name, account_type, \
           account_class, status, parent_account_id, created_at, updated_at) \
         VALUES ($1, $2, $3, $4, 'pool', 'primary', 'active', NULL, $5, $5)",
            new_id(id)?,
            new_id(business_id)?,
            account_number,
            account_name,
            now
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn main_account_number(
        conn: Self::Conn<'_>,
        business_id: &str,
    ) -> Result<Option<String>, StoreError> {
        conn.run(async |conn| {
            Ok(sqlx::query_scalar!(
                "SELECT account_number FROM accounts \
         WHERE business_id = $1 AND account_type = 'pool' AND account_class = 'primary'",
                id(business_id)
            )
            .fetch_optional(&mut *conn)
            .await?)
        })
        .await
    }

    async fn locked_status(tx: &mut Tx, id: &str) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar!(
            "SELECT status FROM accounts WHERE id = $1 FOR SHARE",
            crate::id(id)
        )
        .fetch_optional(&mut **tx)
        .await?)
    }

    async fn lock_by_number(
        tx: &mut Tx,
        number: &str,
    ) -> Result<Option<(String, String)>, StoreError> {
        let row = sqlx::query!(
            "SELECT id, business_id FROM accounts WHERE account_number = $1 FOR UPDATE",
            number
        )
        .fetch_optional(&mut **tx)
        .await?;
        Ok(row.map(|row| (row.id.to_string(), row.business_id.to_string())))
    }

    async fn set_status(tx: &mut Tx, id: &str, from: &str, to: &str) -> Result<bool, StoreError> {
        let changed = sqlx::query!(
            "UPDATE accounts SET status = $1 WHERE id = $2 AND status = $3",
            to,
            crate::id(id),
            from
        )
        .execute(&mut **tx)
        .await?
        .rows_affected();
        Ok(changed == 1)
    }

    async fn apply_balance_changes(
        tx: &mut Tx,
        changes: &[BalanceChange<'_>],
        max_balance: i64,
        at: DateTime<Utc>,
    ) -> Result<Vec<String>, StoreError> {
        let ids: Vec<uuid::Uuid> = changes.iter().map(|change| id(change.account_id)).collect();
        let amounts: Vec<i64> = changes.iter().map(|change| change.amount).collect();
        let must_be_active: Vec<bool> =
            changes.iter().map(|change| change.must_be_active).collect();
        let changed = sqlx::query_scalar!(
            "UPDATE accounts a SET balance = a.balance + c.amount, last_balance_update = $1, \
           updated_at = $1 \
         FROM unnest($2::uuid[], $3::bigint[], $4::boolean[]) AS c (id, amount, must_be_active) \
         WHERE a.id = c.id AND a.balance + c.amount >= 0 AND a.balance + c.amount <= $5 \
           AND (a.status = 'active' OR NOT c.must_be_active) \
         RETURNING a.id",
            at,
            &ids,
            &amounts,
            &must_be_active,
            max_balance
        )
        .fetch_all(&mut **tx)
        .await?;
        Ok(text_ids(changed))
    }

    async fn balance_and_status(
        tx: &mut Tx,
        account_id: &str,
    ) -> Result<Option<(i64, String)>, StoreError> {
        let row = sqlx::query!(
            "SELECT balance, status FROM accounts WHERE id = $1",
            id(account_id)
        )
        .fetch_optional(&mut **tx)
        .await?;
        Ok(row.map(|row| (row.balance, row.status)))
    }

    /// The account type filter: `normal` (pool and current), `virtual`, `current`; any other
    /// (Kobo opens no savings accounts) matches nothing.
    async fn list(
        pool: &Pool,
        business_id: &str,
        filters: &Filters,
        cursor: Option<Cursor>,
        limit: u64,
    ) -> Result<Vec<AccountRow>, StoreError> {
        pool.run(async |pool| {
            let (cursor_at, cursor_id) = match cursor {
                Some(cursor) => (Some(cursor.created_at), Some(cursor.id)),
                None => (None, None),
            };
            Ok(sqlx::query_as!(
                AccountRow,
                r#"SELECT a.id::text AS "id!", a.account_number, a.account_name, a.account_type,
           a.account_class, a.status, a.balance, a.last_balance_update,
           p.account_number AS "parent_account_number?", a.customer_id::text AS customer_id,
           a.created_at
         FROM accounts a LEFT JOIN accounts p ON p.id = a.parent_account_id
         WHERE a.business_id = $1
           AND ($2::text IS NULL
                OR ($2 = 'normal' AND a.account_type IN ('pool', 'current'))
                OR ($2 = 'virtual' AND a.account_type = 'virtual')
                OR ($2 = 'current' AND a.account_type = 'current'))
           AND ($3::text IS NULL OR a.account_number = $3)
           AND ($4::text IS NULL OR a.status = $4)
           AND ($5::boolean IS NULL OR (a.status = 'active') = $5)
           AND ($6::text IS NULL OR (a.account_type = 'virtual' AND p.account_number = $6))
           AND ($7::text IS NULL OR a.account_class = $7)
           AND (a.created_at, a.id) < (COALESCE($8::timestamptz, 'infinity'),
                COALESCE($9::uuid, 'ffffffff-ffff-ffff-ffff-ffffffffffff'))
           AND ($11::text IS NULL OR LOWER(a.account_name) LIKE $11 ESCAPE '\'
                OR a.account_number LIKE $11 ESCAPE '\')
         ORDER BY a.created_at DESC, a.id DESC
         LIMIT $10"#,
                id(business_id),
                filters.account_type.as_deref(),
                filters.account_number.as_deref(),
                filters.status.as_deref(),
                filters.is_available,
                filters.parent_account_number.as_deref(),
                filters.account_class.as_deref(),
                cursor_at,
                cursor_id,
                (limit + 1) as i64,
                filters.search.as_deref()
            )
            .fetch_all(&mut *pool)
            .await?)
        })
        .await
    }

    async fn activity(
        pool: &Pool,
        ids: &[&str],
        from: Option<DateTime<Utc>>,
        until: Option<DateTime<Utc>>,
    ) -> Result<HashMap<String, Activity>, StoreError> {
        pool.run(async |pool| {
            if ids.is_empty() {
                return Ok(HashMap::new());
            }
            let ids: Vec<uuid::Uuid> = ids.iter().map(|account| id(account)).collect();
            let rows = sqlx::query!(
                r#"WITH t AS (
           SELECT account_id, amount, created_at, status,
             category = 'collection' AND status = 'success'
               AND created_at >= COALESCE($2::timestamptz, '-infinity')
               AND created_at < COALESCE($3::timestamptz, 'infinity') AS collection,
             category = 'transfer' AND transaction_type = 'debit'
               AND status IN ('success', 'pending') AS transfer
           FROM transactions WHERE account_id = ANY($1))
         SELECT account_id::text AS "account_id!",
           COUNT(*) FILTER (WHERE collection) AS "collections!",
           (SUM(amount) FILTER (WHERE collection))::text AS collected,
           MAX(created_at) FILTER (WHERE collection) AS last_collection,
           COUNT(*) FILTER (WHERE transfer) AS "transfers!",
           (SUM(amount) FILTER (WHERE transfer))::text AS transferred,
           COUNT(*) FILTER (WHERE status <> 'failed') AS "transactions!"
         FROM t GROUP BY account_id"#,
                &ids,
                from,
                until
            )
            .fetch_all(&mut *pool)
            .await?;
            let mut activity = HashMap::new();
            for row in rows {
                activity.insert(
                    row.account_id,
                    Activity {
                        collections: row.collections,
                        collected: sums::read(row.collected)?,
                        last_collection: row.last_collection,
                        transfers: row.transfers,
                        transferred: sums::read(row.transferred)?,
                        transactions: row.transactions,
                    },
                );
            }
            Ok(activity)
        })
        .await
    }

    async fn metrics(
        pool: &Pool,
        business_id: &str,
        filters: &MetricsFilters,
    ) -> Result<Metrics, StoreError> {
        pool.run(async |pool| {
            // `LIMIT NULL` is no limit.
            let row = sqlx::query!(
                r#"WITH chosen AS (
           SELECT a.id, a.status, a.account_type, a.balance FROM accounts a
           WHERE a.business_id = $1
             AND ($2::text IS NULL
                  OR ($2 = 'normal' AND a.account_type IN ('pool', 'current'))
                  OR ($2 = 'virtual' AND a.account_type = 'virtual')
                  OR ($2 = 'current' AND a.account_type = 'current'))
             AND a.created_at >= COALESCE($3::timestamptz, '-infinity')
             AND a.created_at < COALESCE($4::timestamptz, 'infinity')
           ORDER BY a.created_at DESC, a.id DESC
           LIMIT $5)
         SELECT
           COUNT(*) FILTER (WHERE status = 'active') AS "active!",
           COUNT(*) FILTER (WHERE status <> 'active') AS "inactive!",
           COUNT(*) FILTER (WHERE account_type = 'virtual') AS "virtual_accounts!",
           SUM(balance)::text AS balance,
           (SELECT SUM(t.amount)::text FROM transactions t JOIN chosen c ON c.id = t.account_id
              WHERE t.category = 'collection' AND t.status = 'success'
                AND t.created_at >= COALESCE($3::timestamptz, '-infinity')
                AND t.created_at < COALESCE($4::timestamptz, 'infinity')) AS collected
         FROM chosen"#,
                id(business_id),
                filters.account_type.as_deref(),
                filters.from,
                filters.until,
                filters.count
            )
            .fetch_one(&mut *pool)
            .await?;
            Ok(Metrics {
                active: row.active,
                inactive: row.inactive,
                virtual_accounts: row.virtual_accounts,
                balance: sums::read(row.balance)?,
                collected: sums::read(row.collected)?,
            })
        })
        .await
    }

    async fn payout_reads(
        conn: Self::Conn<'_>,
        lookup: &PayoutLookup<'_>,
    ) -> Result<Vec<PayoutRead>, StoreError> {
        let (operation, key, cutoff) = match &lookup.key {
            Some((key, cutoff)) => (Some(key.operation), Some(key.key), Some(*cutoff)),
            None => (None, None, None),
        };
        conn.run(async |conn| {
            let rows = sqlx::query!(
                r#"SELECT a.id::text AS "id!", a.account_number, a.account_name, a.account_type,
           a.account_class, a.status, a.balance, a.last_balance_update,
           p.account_number AS "parent_account_number?", a.customer_id::text AS customer_id,
           a.created_at, a.business_id::text AS "business_id!", o.name AS business_name,
           b.name AS payer_name, COALESCE(b.daily_transfer_limit, $3) AS "daily_limit!",
           (SELECT ap.min_amount FROM approval_policies ap
             WHERE ap.business_id = b.id AND ap.is_active) AS policy_minimum,
           (SELECT t.reference_number FROM transfers t
             WHERE t.reference = $5 AND t.business_id = b.id) AS reference_owner,
           k.request_hash AS "key_request_hash?", k.response_data AS "key_response_data?",
           k.refusal_code AS "key_refusal_code?", k.refusal_message AS "key_refusal_message?"
         FROM accounts a LEFT JOIN accounts p ON p.id = a.parent_account_id
         JOIN businesses o ON o.id = a.business_id CROSS JOIN businesses b
         LEFT JOIN idempotency_keys k ON k.business_id = b.id AND k.operation = $6
           AND k.idempotency_key = $7 AND k.created_at >= $8
         WHERE a.account_number IN ($1, $2) AND b.id = $4"#,
                lookup.source,
                lookup.intra_beneficiary.unwrap_or(lookup.source),
                lookup.default_daily_limit,
                id(lookup.business_id),
                lookup.reference,
                operation,
                key,
                cutoff
            )
            .fetch_all(&mut *conn)
            .await?;
            Ok(rows
                .into_iter()
                .map(|row| PayoutRead {
                    stored_key: row.key_request_hash.map(|request_hash| StoredKey {
                        request_hash,
                        response_data: row.key_response_data,
                        refusal_code: row.key_refusal_code,
                        refusal_message: row.key_refusal_message,
                    }),
                    account: KoboAccount::from(AccountWithBusiness {
                        id: row.id,
                        account_number: row.account_number,
                        account_name: row.account_name,
                        account_type: row.account_type,
                        account_class: row.account_class,
                        status: row.status,
                        balance: row.balance,
                        last_balance_update: row.last_balance_update,
                        parent_account_number: row.parent_account_number,
                        customer_id: row.customer_id,
                        created_at: row.created_at,
                        business_id: row.business_id,
                        business_name: row.business_name,
                    }),
                    payer_name: row.payer_name,
                    daily_limit: row.daily_limit,
                    policy_minimum: row.policy_minimum,
                    reference_owner: row.reference_owner,
                })
                .collect())
        })
        .await
    }
}
