//! `accounts`: every customer-facing account (the business's main pool account, its current
//! accounts, its customers' virtual accounts), each with its stored balance.

use std::collections::HashMap;

use chrono::{DateTime, Utc};

use crate::paging::Cursor;
use crate::{first_rows, on, optional_time, sums, timestamp, Store, StoreError, Tx};
use crate::{json_array, NO_TIME_BOUND};
pub use kobo_store::accounts::{
    AccountRow, Activity, BalanceChange, CurrentAccountFacts, Filters, KoboAccount, Metrics,
    MetricsFilters, NewAccount, PayoutLookup, PayoutRead,
};
use kobo_store::idempotency_keys::StoredKey;

/// An account row with its business, as read (flat, for the checked macros).
struct KoboRecord {
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

impl From<KoboRecord> for KoboAccount {
    fn from(r: KoboRecord) -> KoboAccount {
        KoboAccount {
            account: AccountRow {
                id: r.id,
                account_number: r.account_number,
                account_name: r.account_name,
                account_type: r.account_type,
                account_class: r.account_class,
                status: r.status,
                balance: r.balance,
                last_balance_update: r.last_balance_update,
                parent_account_number: r.parent_account_number,
                customer_id: r.customer_id,
                created_at: r.created_at,
            },
            business_id: r.business_id,
            business_name: r.business_name,
        }
    }
}

/// A row of [`payout_reads`] as read (flat, for the checked macros).
struct PayoutRecord {
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
    payer_name: String,
    daily_limit: i64,
    policy_minimum: Option<i64>,
    reference_owner: Option<String>,
    key_request_hash: Option<String>,
    key_response_data: Option<String>,
    key_refusal_code: Option<String>,
    key_refusal_message: Option<String>,
}

kobo_store::accounts_functions!(backend crate::Backend);

impl kobo_store::accounts::Accounts for crate::Backend {
    async fn find_by_id(conn: Self::Conn<'_>, id: &str) -> Result<Option<AccountRow>, StoreError> {
        let query = sqlx::query_as!(
            AccountRow,
            r#"SELECT a.id AS "id!", a.account_number, a.account_name, a.account_type,
             a.account_class, a.status, a.balance,
             a.last_balance_update AS "last_balance_update: DateTime<Utc>",
             p.account_number AS "parent_account_number?", a.customer_id,
             a.created_at AS "created_at: DateTime<Utc>"
           FROM accounts a LEFT JOIN accounts p ON p.id = a.parent_account_id
           WHERE a.id = ?1"#,
            id
        );
        Ok(on!(conn, query, fetch_optional)?)
    }

    /// By the number alone, whose only index is its unique one, so the plan cannot take another
    /// (see [`super::transfers::reference_owner`]).
    async fn find_by_number_anywhere(
        conn: Self::Conn<'_>,
        number: &str,
    ) -> Result<Option<KoboAccount>, StoreError> {
        let query = sqlx::query_as!(
            KoboRecord,
            r#"SELECT a.id AS "id!", a.account_number, a.account_name, a.account_type,
             a.account_class, a.status, a.balance,
             a.last_balance_update AS "last_balance_update: DateTime<Utc>",
             p.account_number AS "parent_account_number?", a.customer_id,
             a.created_at AS "created_at: DateTime<Utc>",
             a.business_id, o.name AS business_name
           FROM accounts a LEFT JOIN accounts p ON p.id = a.parent_account_id
           JOIN businesses o ON o.id = a.business_id WHERE a.account_number = ?1"#,
            number
        );
        Ok(on!(conn, query, fetch_optional)?.map(KoboAccount::from))
    }

    async fn main_account(
        tx: &mut Tx,
        business_id: &str,
    ) -> Result<Option<AccountRow>, StoreError> {
        Ok(sqlx::query_as!(
            AccountRow,
            r#"SELECT a.id AS "id!", a.account_number, a.account_name, a.account_type,
             a.account_class, a.status, a.balance,
             a.last_balance_update AS "last_balance_update: DateTime<Utc>",
             p.account_number AS "parent_account_number?", a.customer_id,
             a.created_at AS "created_at: DateTime<Utc>"
           FROM accounts a LEFT JOIN accounts p ON p.id = a.parent_account_id
           WHERE a.business_id = ?1 AND a.account_class = 'primary'"#,
            business_id
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
                AND c.account_type = 'current') AS "current_accounts!: i64",
             (SELECT m.id FROM accounts m WHERE m.business_id = b.id
                AND m.account_class = 'primary') AS "main_account_id?: String"
           FROM businesses b WHERE b.id = ?1"#,
            business_id
        )
        .fetch_one(&mut **tx)
        .await?)
    }

    async fn insert(tx: &mut Tx, new: &NewAccount<'_>) -> Result<(), StoreError> {
        let created_at = timestamp(new.created_at);
        sqlx::query!(
            "INSERT INTO accounts (id, business_id, account_number, account_name, account_type, \
           account_class, status, parent_account_id, customer_id, balance, last_balance_update, \
           created_at, updated_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, 'secondary', 'active', ?6, ?7, 0, NULL, ?8, ?8)",
            new.id,
            new.business_id,
            new.account_number,
            new.account_name,
            new.account_type,
            new.parent_account_id,
            new.customer_id,
            created_at
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
        let now = timestamp(now);
        sqlx::query!(
            "INSERT INTO accounts (id, business_id, account_number, account_name, account_type, \
           account_class, status, parent_account_id, created_at, updated_at) \
         VALUES (?1, ?2, ?3, ?4, 'pool', 'primary', 'active', NULL, ?5, ?5)",
            id,
            business_id,
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
        let query = sqlx::query_scalar!(
            "SELECT account_number FROM accounts \
         WHERE business_id = ?1 AND account_type = 'pool' AND account_class = 'primary'",
            business_id
        );
        Ok(on!(conn, query, fetch_optional)?)
    }

    async fn locked_status(tx: &mut Tx, id: &str) -> Result<Option<String>, StoreError> {
        Ok(
            sqlx::query_scalar!("SELECT status FROM accounts WHERE id = ?1", id)
                .fetch_optional(&mut **tx)
                .await?,
        )
    }

    async fn lock_by_number(
        tx: &mut Tx,
        number: &str,
    ) -> Result<Option<(String, String)>, StoreError> {
        let row = sqlx::query!(
            r#"SELECT id AS "id!", business_id FROM accounts WHERE account_number = ?1"#,
            number
        )
        .fetch_optional(&mut **tx)
        .await?;
        Ok(row.map(|row| (row.id, row.business_id)))
    }

    async fn set_status(tx: &mut Tx, id: &str, from: &str, to: &str) -> Result<bool, StoreError> {
        let changed = sqlx::query!(
            "UPDATE accounts SET status = ?1 WHERE id = ?2 AND status = ?3",
            to,
            id,
            from
        )
        .execute(&mut **tx)
        .await?
        .rows_affected();
        Ok(changed == 1)
    }

    /// Applies `changes`, each only if the account stays within zero and `max_balance` and, when
    /// it must be (`BalanceChange::must_be_active`), is active (SQLite's write transaction holds the whole database, so a freeze cannot
    /// come between); the balances' last update is `at`. Returns the ids of the accounts changed.
    /// One statement per account (in process, a statement is a function call); each account
    /// appears once in `changes` (its share of the entry).
    async fn apply_balance_changes(
        tx: &mut Tx,
        changes: &[BalanceChange<'_>],
        max_balance: i64,
        at: DateTime<Utc>,
    ) -> Result<Vec<String>, StoreError> {
        let at = timestamp(at);
        let mut changed = Vec::with_capacity(changes.len());
        for change in changes {
            let id = sqlx::query_scalar!(
                r#"UPDATE accounts SET balance = balance + ?2, last_balance_update = ?3,
                 updated_at = ?3
               WHERE id = ?1 AND balance + ?2 >= 0 AND balance + ?2 <= ?4
                 AND (?5 = 0 OR status = 'active')
               RETURNING id AS "id!""#,
                change.account_id,
                change.amount,
                at,
                max_balance,
                change.must_be_active
            )
            .fetch_optional(&mut **tx)
            .await?;
            changed.extend(id);
        }
        Ok(changed)
    }

    async fn balance_and_status(
        tx: &mut Tx,
        account_id: &str,
    ) -> Result<Option<(i64, String)>, StoreError> {
        let row = sqlx::query!(
            "SELECT balance, status FROM accounts WHERE id = ?1",
            account_id
        )
        .fetch_optional(&mut **tx)
        .await?;
        Ok(row.map(|row| (row.balance, row.status)))
    }

    /// One static statement: each filter `(?n IS NULL OR ...)`; the API's type filter (`normal`:
    /// pool or current, `virtual`, `current`; anything else, such as `savings`, which Kobo never
    /// opens, matches nothing); the cursor a row-value range whose open end binds `NULL`, read as
    /// the widest bound, so `accounts_business_created` is read in order from the cursor. No bound
    /// `LIMIT` (`first_rows`: the reader stops after the page).
    async fn list(
        store: &Store,
        business_id: &str,
        filters: &Filters,
        cursor: Option<Cursor>,
        limit: u64,
    ) -> Result<Vec<AccountRow>, StoreError> {
        let cursor_at = cursor.as_ref().map(|c| timestamp(c.created_at));
        let cursor_id = cursor.as_ref().map(|c| c.id.to_string());
        let query = sqlx::query_as!(
            AccountRow,
            r#"SELECT a.id AS "id!", a.account_number, a.account_name, a.account_type,
             a.account_class, a.status, a.balance,
             a.last_balance_update AS "last_balance_update: DateTime<Utc>",
             p.account_number AS "parent_account_number?", a.customer_id,
             a.created_at AS "created_at: DateTime<Utc>"
           FROM accounts a LEFT JOIN accounts p ON p.id = a.parent_account_id
           WHERE a.business_id = ?1
             AND (a.created_at, a.id) < (COALESCE(?2, ?10), COALESCE(?3, ''))
             AND (?4 IS NULL
               OR (?4 = 'normal' AND a.account_type IN ('pool', 'current'))
               OR (?4 IN ('virtual', 'current') AND a.account_type = ?4))
             AND (?5 IS NULL OR a.account_number = ?5)
             AND (?6 IS NULL OR a.status = ?6)
             AND (?7 IS NULL OR (?7 = 1 AND a.status = 'active')
               OR (?7 = 0 AND a.status <> 'active'))
             AND (?8 IS NULL OR (a.account_type = 'virtual' AND p.account_number = ?8))
             AND (?9 IS NULL OR a.account_class = ?9)
             AND (?11 IS NULL OR LOWER(a.account_name) LIKE ?11 ESCAPE '\'
               OR a.account_number LIKE ?11 ESCAPE '\')
           ORDER BY a.created_at DESC, a.id DESC"#,
            business_id,
            cursor_at,
            cursor_id,
            filters.account_type,
            filters.account_number,
            filters.status,
            filters.is_available,
            filters.parent_account_number,
            filters.account_class,
            NO_TIME_BOUND,
            filters.search
        );
        first_rows(query.fetch(store.pool()), limit + 1).await
    }

    async fn activity(
        store: &Store,
        ids: &[&str],
        from: Option<DateTime<Utc>>,
        until: Option<DateTime<Utc>>,
    ) -> Result<HashMap<String, Activity>, StoreError> {
        if ids.is_empty() {
            return Ok(HashMap::new());
        }
        let ids = json_array(ids.iter().copied());
        let from = from.map(timestamp);
        let until = until.map(timestamp);
        // A collection: `category = 'collection' AND status = 'success'` in the window; a
        // transfer: a debit of category `transfer`, succeeded or pending. Sums in limbs
        // (`crate::sums`).
        let rows = sqlx::query!(
            r#"SELECT account_id AS "account_id!",
             CAST(SUM(CASE WHEN category = 'collection' AND status = 'success'
               AND created_at >= COALESCE(?2, '') AND created_at < COALESCE(?3, ?4)
               THEN 1 ELSE 0 END) AS BIGINT) AS "collections!: i64",
             CAST(COALESCE(SUM(CASE WHEN category = 'collection' AND status = 'success'
               AND created_at >= COALESCE(?2, '') AND created_at < COALESCE(?3, ?4)
               THEN amount / 1000000000 ELSE 0 END), 0) AS BIGINT) AS "collected_high!: i64",
             CAST(COALESCE(SUM(CASE WHEN category = 'collection' AND status = 'success'
               AND created_at >= COALESCE(?2, '') AND created_at < COALESCE(?3, ?4)
               THEN amount % 1000000000 ELSE 0 END), 0) AS BIGINT) AS "collected_low!: i64",
             MAX(CASE WHEN category = 'collection' AND status = 'success'
               AND created_at >= COALESCE(?2, '') AND created_at < COALESCE(?3, ?4)
               THEN created_at END) AS "last_collection?: String",
             CAST(SUM(CASE WHEN category = 'transfer' AND transaction_type = 'debit'
               AND status IN ('success', 'pending') THEN 1 ELSE 0 END) AS BIGINT)
               AS "transfers!: i64",
             CAST(COALESCE(SUM(CASE WHEN category = 'transfer' AND transaction_type = 'debit'
               AND status IN ('success', 'pending') THEN amount / 1000000000 ELSE 0 END), 0)
               AS BIGINT) AS "transferred_high!: i64",
             CAST(COALESCE(SUM(CASE WHEN category = 'transfer' AND transaction_type = 'debit'
               AND status IN ('success', 'pending') THEN amount % 1000000000 ELSE 0 END), 0)
               AS BIGINT) AS "transferred_low!: i64",
             CAST(SUM(CASE WHEN status <> 'failed' THEN 1 ELSE 0 END) AS BIGINT)
               AS "transactions!: i64"
           FROM transactions WHERE account_id IN (SELECT value FROM json_each(?1))
           GROUP BY account_id"#,
            ids,
            from,
            until,
            NO_TIME_BOUND
        )
        .fetch_all(store.pool())
        .await?;
        let mut activity = HashMap::new();
        for row in rows {
            activity.insert(
                row.account_id,
                Activity {
                    collections: row.collections,
                    collected: sums::join(row.collected_high, row.collected_low),
                    last_collection: optional_time(row.last_collection)?,
                    transfers: row.transfers,
                    transferred: sums::join(row.transferred_high, row.transferred_low),
                    transactions: row.transactions,
                },
            );
        }
        Ok(activity)
    }

    async fn metrics(
        store: &Store,
        business_id: &str,
        filters: &MetricsFilters,
    ) -> Result<Metrics, StoreError> {
        let from = filters.from.map(timestamp);
        let until = filters.until.map(timestamp);
        let row = sqlx::query!(
            r#"WITH chosen AS (SELECT a.id, a.status, a.account_type, a.balance FROM accounts a
             WHERE a.business_id = ?1
               AND (?2 IS NULL
                 OR (?2 = 'normal' AND a.account_type IN ('pool', 'current'))
                 OR (?2 IN ('virtual', 'current') AND a.account_type = ?2))
               AND a.created_at >= COALESCE(?3, '') AND a.created_at < COALESCE(?4, ?6)
             ORDER BY a.created_at DESC, a.id DESC LIMIT COALESCE(?5, -1))
           SELECT
             CAST(COALESCE(SUM(CASE WHEN status = 'active' THEN 1 ELSE 0 END), 0) AS BIGINT)
               AS "active!: i64",
             CAST(COALESCE(SUM(CASE WHEN status <> 'active' THEN 1 ELSE 0 END), 0) AS BIGINT)
               AS "inactive!: i64",
             CAST(COALESCE(SUM(CASE WHEN account_type = 'virtual' THEN 1 ELSE 0 END), 0)
               AS BIGINT) AS "virtual_accounts!: i64",
             CAST(COALESCE(SUM(balance / 1000000000), 0) AS BIGINT) AS "balance_high!: i64",
             CAST(COALESCE(SUM(balance % 1000000000), 0) AS BIGINT) AS "balance_low!: i64",
             (SELECT CAST(COALESCE(SUM(t.amount / 1000000000), 0) AS BIGINT) FROM transactions t
                JOIN chosen c ON c.id = t.account_id
                WHERE t.category = 'collection' AND t.status = 'success'
                  AND t.created_at >= COALESCE(?3, '') AND t.created_at < COALESCE(?4, ?6))
               AS "collected_high!: i64",
             (SELECT CAST(COALESCE(SUM(t.amount % 1000000000), 0) AS BIGINT) FROM transactions t
                JOIN chosen c ON c.id = t.account_id
                WHERE t.category = 'collection' AND t.status = 'success'
                  AND t.created_at >= COALESCE(?3, '') AND t.created_at < COALESCE(?4, ?6))
               AS "collected_low!: i64"
           FROM chosen"#,
            business_id,
            filters.account_type,
            from,
            until,
            filters.count,
            NO_TIME_BOUND
        )
        .fetch_one(store.pool())
        .await?;
        Ok(Metrics {
            active: row.active,
            inactive: row.inactive,
            virtual_accounts: row.virtual_accounts,
            balance: sums::join(row.balance_high, row.balance_low),
            collected: sums::join(row.collected_high, row.collected_low),
        })
    }

    async fn payout_reads(
        conn: Self::Conn<'_>,
        lookup: &PayoutLookup<'_>,
    ) -> Result<Vec<PayoutRead>, StoreError> {
        let beneficiary = lookup.intra_beneficiary.unwrap_or(lookup.source);
        let (operation, key, cutoff) = match &lookup.key {
            Some((key, cutoff)) => (Some(key.operation), Some(key.key), Some(timestamp(*cutoff))),
            None => (None, None, None),
        };
        let query = sqlx::query_as!(
            PayoutRecord,
            r#"SELECT a.id AS "id!", a.account_number, a.account_name, a.account_type,
             a.account_class, a.status, a.balance,
             a.last_balance_update AS "last_balance_update: DateTime<Utc>",
             p.account_number AS "parent_account_number?", a.customer_id,
             a.created_at AS "created_at: DateTime<Utc>",
             a.business_id, o.name AS business_name, b.name AS payer_name,
             COALESCE(b.daily_transfer_limit, ?3) AS "daily_limit!: i64",
             (SELECT ap.min_amount FROM approval_policies ap
               WHERE ap.business_id = b.id AND ap.is_active = 1) AS "policy_minimum?: i64",
             (SELECT t.reference_number FROM transfers t
               WHERE t.business_id = b.id AND t.reference = ?5) AS "reference_owner?: String",
             k.request_hash AS "key_request_hash?: String",
             k.response_data AS "key_response_data?: String",
             k.refusal_code AS "key_refusal_code?: String",
             k.refusal_message AS "key_refusal_message?: String"
           FROM accounts a LEFT JOIN accounts p ON p.id = a.parent_account_id
           JOIN businesses o ON o.id = a.business_id CROSS JOIN businesses b
           LEFT JOIN idempotency_keys k ON k.business_id = b.id AND k.operation = ?6
             AND k.idempotency_key = ?7 AND k.created_at >= ?8
           WHERE a.account_number IN (?1, ?2) AND b.id = ?4"#,
            lookup.source,
            beneficiary,
            lookup.default_daily_limit,
            lookup.business_id,
            lookup.reference,
            operation,
            key,
            cutoff
        );
        let rows = on!(conn, query, fetch_all)?;
        Ok(rows
            .into_iter()
            .map(|r| PayoutRead {
                payer_name: r.payer_name,
                daily_limit: r.daily_limit,
                policy_minimum: r.policy_minimum,
                reference_owner: r.reference_owner,
                stored_key: r.key_request_hash.map(|request_hash| StoredKey {
                    request_hash,
                    response_data: r.key_response_data,
                    refusal_code: r.key_refusal_code,
                    refusal_message: r.key_refusal_message,
                }),
                account: KoboAccount::from(KoboRecord {
                    id: r.id,
                    account_number: r.account_number,
                    account_name: r.account_name,
                    account_type: r.account_type,
                    account_class: r.account_class,
                    status: r.status,
                    balance: r.balance,
                    last_balance_update: r.last_balance_update,
                    parent_account_number: r.parent_account_number,
                    customer_id: r.customer_id,
                    created_at: r.created_at,
                    business_id: r.business_id,
                    business_name: r.business_name,
                }),
            })
            .collect())
    }
}
