//! `transactions` (one account's side of a journal entry, as a business lists it) and
//! `settlements` (the cleared inbound credits, one per collection, sharing its id).

use chrono::{DateTime, Utc};

use crate::{
    contains_pattern, first_rows, on, sums, timestamp, uuid, Store, StoreError, Tx, NO_TIME_BOUND,
};
use kobo_store::paging::Cursor;
pub use kobo_store::transactions::{
    DayTotal, Filters, Listing, NewTransaction, Originator, PeriodTotals, SessionCredit,
    StatementLine, TransactionRow, Window,
};

pub use kobo_store::batch::transaction_into as record_into;

/// [`Write::Transaction`], run in `tx` ([`crate::batch::run`]): the transaction, and its
/// settlement when it is one. Its balance after it is its account's balance as the batch's
/// movement left it, less `later`, what the batch's later transactions on the account move it
/// by ([`kobo_store::batch::later_on_account`]).
pub(crate) async fn write(tx: &mut Tx, new: NewTransaction, later: i64) -> Result<(), StoreError> {
    let at = timestamp(new.created_at);
    let id = new.id.to_string();
    let narration_key = format!("{} {}", new.narration, new.reference_number).to_lowercase();
    let originator = new.originator.as_ref();
    let originator_account_number = originator.map(|o| o.account_number.as_str());
    let originator_account_name = originator.map(|o| o.account_name.as_str());
    let originator_bank_code = originator.map(|o| o.bank_code.as_str());
    let originator_bank_name = originator.map(|o| o.bank_name.as_str());
    let written = sqlx::query!(
        "INSERT INTO transactions (id, business_id, account_id, entry_id, sequence, \
           reference_number, transaction_type, category, status, channel, amount, narration, \
           narration_key, session_id, originator_account_number, originator_account_name, \
           originator_bank_code, originator_bank_name, created_at, balance_after) \
         SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, \
           ?18, ?19, a.balance - ?20 FROM accounts a WHERE a.id = ?3",
        id,
        new.business_id,
        new.account_id,
        new.entry_id,
        new.sequence,
        new.reference_number,
        new.transaction_type,
        new.category,
        new.status,
        new.channel,
        new.amount,
        new.narration,
        narration_key,
        new.session_id,
        originator_account_number,
        originator_account_name,
        originator_bank_code,
        originator_bank_name,
        at,
        later
    )
    .execute(&mut **tx)
    .await?;
    if written.rows_affected() != 1 {
        return Err(StoreError::Misuse(format!(
            "a transaction on account {}, which is not a customer account",
            new.account_id
        )));
    }
    if new.settled {
        sqlx::query!(
            "INSERT INTO settlements (id, business_id, account_id, reference, amount, status, \
               settlement_date, created_at) VALUES (?1, ?2, ?3, ?4, ?5, 'success', ?6, ?6)",
            id,
            new.business_id,
            new.account_id,
            new.reference_number,
            new.amount,
            at
        )
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

/// A row of [`list`] as read, its id still text.
pub(crate) struct Listed {
    pub(crate) id: String,
    pub(crate) reference_number: String,
    pub(crate) transaction_type: String,
    pub(crate) category: String,
    pub(crate) status: String,
    pub(crate) channel: String,
    pub(crate) amount: i64,
    pub(crate) narration: String,
    pub(crate) session_id: Option<String>,
    pub(crate) originator_account_number: Option<String>,
    pub(crate) originator_account_name: Option<String>,
    pub(crate) originator_bank_code: Option<String>,
    pub(crate) originator_bank_name: Option<String>,
    pub(crate) created_at: DateTime<Utc>,
    pub(crate) account_number: String,
    pub(crate) account_name: String,
    pub(crate) balance_after: i64,
}

impl Listed {
    pub(crate) fn into_row(self) -> Result<TransactionRow, StoreError> {
        Ok(TransactionRow {
            id: uuid(&self.id)?,
            reference_number: self.reference_number,
            transaction_type: self.transaction_type,
            category: self.category,
            status: self.status,
            channel: self.channel,
            amount: self.amount,
            narration: self.narration,
            session_id: self.session_id,
            originator_account_number: self.originator_account_number,
            originator_account_name: self.originator_account_name,
            originator_bank_code: self.originator_bank_code,
            originator_bank_name: self.originator_bank_name,
            created_at: self.created_at,
            account_number: self.account_number,
            account_name: self.account_name,
            balance_after: self.balance_after,
        })
    }
}

kobo_store::transactions_functions!(backend crate::Backend);

impl kobo_store::transactions::Transactions for crate::Backend {
    async fn set_status(tx: &mut Tx, id: &str, status: &str) -> Result<(), StoreError> {
        sqlx::query!(
            "UPDATE transactions SET status = ?2 WHERE id = ?1",
            id,
            status
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    async fn credit_of_session(
        conn: Self::Conn<'_>,
        session_id: &str,
    ) -> Result<Option<SessionCredit>, StoreError> {
        let query = sqlx::query_as!(
            SessionCredit,
            r#"SELECT t.id AS "id!", a.account_number, t.amount FROM transactions t
           JOIN accounts a ON a.id = t.account_id
           WHERE t.session_id = ?1 AND t.transaction_type = 'credit'"#,
            session_id
        );
        Ok(on!(conn, query, fetch_optional)?)
    }

    async fn set_session_id(tx: &mut Tx, id: &str, session_id: &str) -> Result<(), StoreError> {
        sqlx::query!(
            "UPDATE transactions SET session_id = ?2 WHERE id = ?1",
            id,
            session_id
        )
        .execute(&mut **tx)
        .await?;
        Ok(())
    }

    /// Four static statements (transactions or settlements, of one account or of the business),
    /// each filter `(?n IS NULL OR ...)`. The keyset cursor and the time range are ranges whose open
    /// ends bind `NULL`, read as the widest bound, so that the keyset index
    /// (`transactions_keyset`, or `transactions_account_keyset` for one account, found once by an
    /// uncorrelated subquery) is always read as a range, in order: no sort. The page has no bound
    /// `LIMIT` (`first_rows`: the reader stops after the page); `OFFSET` stays bound (`LIMIT -1`: none).
    async fn list(
        store: &Store,
        listing: Listing,
        business_id: &str,
        filters: &Filters,
        window: &Window,
    ) -> Result<Vec<TransactionRow>, StoreError> {
        let cursor_at = window.cursor.as_ref().map(|c| timestamp(c.created_at));
        let cursor_id = window.cursor.as_ref().map(|c| c.id.to_string());
        let from = filters.from.map(timestamp);
        let until = filters.until.map(timestamp);
        let search = filters.search.as_deref().map(contains_pattern);
        let offset = window.offset.unwrap_or(0);
        let (status, kind, category, reference, channel) = (
            filters.status.as_deref(),
            filters.transaction_type.as_deref(),
            filters.category.as_deref(),
            filters.reference_number.as_deref(),
            filters.channel.as_deref(),
        );
        let n = window.size + 1;
        let binds = Binds {
            business_id,
            cursor_at,
            cursor_id,
            from,
            until,
            status,
            kind,
            category,
            reference,
            channel,
            search,
            offset,
        };
        let rows = match (listing, filters.account_number.as_deref()) {
            (Listing::Transactions, None) => business_transactions(store, &binds, n).await?,
            (Listing::Transactions, Some(number)) => {
                account_transactions(store, &binds, number, n).await?
            }
            (Listing::Settlements, None) => business_settlements(store, &binds, n).await?,
            (Listing::Settlements, Some(number)) => {
                account_settlements(store, &binds, number, n).await?
            }
        };
        rows.into_iter().map(Listed::into_row).collect()
    }

    async fn per_day(
        store: &Store,
        business_id: &str,
        account_id: Option<&str>,
        from: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<Vec<DayTotal>, StoreError> {
        let from = timestamp(from);
        let until = timestamp(until);
        let rows = sqlx::query!(
            r#"SELECT substr(created_at, 1, 10) AS "day!: String",
                 transaction_type = 'credit' AS "credit!: bool",
                 COUNT(*) AS "count!: i64",
                 CAST(SUM(amount / 1000000000) AS BIGINT) AS "high!: i64",
                 CAST(SUM(amount % 1000000000) AS BIGINT) AS "low!: i64"
               FROM transactions
               WHERE business_id = ?1 AND created_at >= ?2 AND created_at < ?3
                 AND (?4 IS NULL OR account_id = ?4)
                 AND ((transaction_type = 'credit' AND status = 'success' AND category <> 'reversal')
                   OR (transaction_type = 'debit' AND status IN ('success', 'pending')))
               GROUP BY 1, 2
               ORDER BY 1, 2"#,
            business_id,
            from,
            until,
            account_id
        )
        .fetch_all(store.pool())
        .await?;
        Ok(rows
            .into_iter()
            .map(|row| {
                (
                    row.day,
                    row.credit,
                    row.count,
                    sums::join(row.high, row.low),
                )
            })
            .collect())
    }

    /// Each statement reads `transactions_account_keyset` by name (`INDEXED BY`): SQLite keeps
    /// no statistics, and `transactions_account` also leads with the account.
    async fn balance_before(
        store: &Store,
        account_id: &str,
        at: DateTime<Utc>,
    ) -> Result<i64, StoreError> {
        let at = timestamp(at);
        let balance = sqlx::query_scalar!(
            r#"SELECT balance_after AS "balance_after!: i64"
               FROM transactions INDEXED BY transactions_account_keyset
               WHERE account_id = ?1 AND created_at < ?2
               ORDER BY created_at DESC, id DESC LIMIT 1"#,
            account_id,
            at
        )
        .fetch_optional(store.pool())
        .await?;
        Ok(balance.unwrap_or(0))
    }

    async fn statement_lines(
        store: &Store,
        account_id: &str,
        after: &Cursor,
        until: DateTime<Utc>,
        limit: u64,
    ) -> Result<Vec<StatementLine>, StoreError> {
        let after_at = timestamp(after.created_at);
        let after_id = after.id.to_string();
        let until = timestamp(until);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = sqlx::query!(
            r#"SELECT id AS "id!", reference_number, transaction_type, category, status,
                 channel, amount, narration, session_id, originator_account_number,
                 originator_account_name, originator_bank_code, originator_bank_name,
                 created_at AS "created_at: DateTime<Utc>",
                 balance_after AS "balance_after!: i64"
               FROM transactions INDEXED BY transactions_account_keyset
               WHERE account_id = ?1 AND (created_at, id) > (?2, ?3) AND created_at < ?4
               ORDER BY created_at, id LIMIT ?5"#,
            account_id,
            after_at,
            after_id,
            until,
            limit
        )
        .fetch_all(store.pool())
        .await?;
        rows.into_iter()
            .map(|row| {
                Ok(StatementLine {
                    id: uuid(&row.id)?,
                    reference_number: row.reference_number,
                    transaction_type: row.transaction_type,
                    category: row.category,
                    status: row.status,
                    channel: row.channel,
                    amount: row.amount,
                    narration: row.narration,
                    session_id: row.session_id,
                    originator_account_number: row.originator_account_number,
                    originator_account_name: row.originator_account_name,
                    originator_bank_code: row.originator_bank_code,
                    originator_bank_name: row.originator_bank_name,
                    created_at: row.created_at,
                    balance_after: row.balance_after,
                })
            })
            .collect()
    }

    async fn period_totals(
        store: &Store,
        account_id: &str,
        from: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<PeriodTotals, StoreError> {
        let from = timestamp(from);
        let until = timestamp(until);
        let row = sqlx::query!(
            r#"SELECT count(*) FILTER (WHERE transaction_type = 'credit') AS "credits!: i64",
                 CAST(COALESCE(SUM(amount / 1000000000)
                   FILTER (WHERE transaction_type = 'credit'), 0) AS BIGINT)
                   AS "credited_high!: i64",
                 CAST(COALESCE(SUM(amount % 1000000000)
                   FILTER (WHERE transaction_type = 'credit'), 0) AS BIGINT)
                   AS "credited_low!: i64",
                 count(*) FILTER (WHERE transaction_type = 'debit') AS "debits!: i64",
                 CAST(COALESCE(SUM(amount / 1000000000)
                   FILTER (WHERE transaction_type = 'debit'), 0) AS BIGINT)
                   AS "debited_high!: i64",
                 CAST(COALESCE(SUM(amount % 1000000000)
                   FILTER (WHERE transaction_type = 'debit'), 0) AS BIGINT)
                   AS "debited_low!: i64"
               FROM transactions INDEXED BY transactions_account_keyset
               WHERE account_id = ?1 AND created_at >= ?2 AND created_at < ?3"#,
            account_id,
            from,
            until
        )
        .fetch_one(store.pool())
        .await?;
        Ok(PeriodTotals {
            credits: row.credits,
            credited: sums::join(row.credited_high, row.credited_low),
            debits: row.debits,
            debited: sums::join(row.debited_high, row.debited_low),
        })
    }
}

/// What the four statements of `list` bind (`?13`, the account's number, aside).
struct Binds<'a> {
    business_id: &'a str,
    cursor_at: Option<String>,
    cursor_id: Option<String>,
    from: Option<String>,
    until: Option<String>,
    status: Option<&'a str>,
    kind: Option<&'a str>,
    category: Option<&'a str>,
    reference: Option<&'a str>,
    channel: Option<&'a str>,
    search: Option<String>,
    offset: i64,
}

/// The business's transactions.
async fn business_transactions(
    store: &Store,
    binds: &Binds<'_>,
    n: u64,
) -> Result<Vec<Listed>, StoreError> {
    let query = sqlx::query_as!(
        Listed,
        r#"SELECT t.id AS "id!", t.reference_number, t.transaction_type, t.category,
                     t.status, t.channel, t.amount, t.narration, t.session_id,
                     t.originator_account_number, t.originator_account_name,
                     t.originator_bank_code, t.originator_bank_name,
                     t.created_at AS "created_at: DateTime<Utc>",
                     a.account_number, a.account_name,
                     t.balance_after AS "balance_after!: i64"
                   FROM transactions t JOIN accounts a ON a.id = t.account_id
                   WHERE t.business_id = ?1
                     AND (t.created_at, t.id) < (COALESCE(?2, ?14), COALESCE(?3, ''))
                     AND t.created_at >= COALESCE(?4, '') AND t.created_at < COALESCE(?5, ?14)
                     AND (?6 IS NULL OR t.status = ?6)
                     AND (?7 IS NULL OR t.transaction_type = ?7)
                     AND (?8 IS NULL OR t.category = ?8)
                     AND (?9 IS NULL OR t.reference_number = ?9)
                     AND (?10 IS NULL OR t.channel = ?10)
                     AND (?11 IS NULL OR t.narration_key LIKE ?11 ESCAPE '\')
                   ORDER BY t.created_at DESC, t.id DESC LIMIT -1 OFFSET ?12"#,
        binds.business_id,
        binds.cursor_at,
        binds.cursor_id,
        binds.from,
        binds.until,
        binds.status,
        binds.kind,
        binds.category,
        binds.reference,
        binds.channel,
        binds.search,
        binds.offset,
        None::<&str>,
        NO_TIME_BOUND
    );
    first_rows(query.fetch(store.pool()), n).await
}

/// One account's transactions.
async fn account_transactions(
    store: &Store,
    binds: &Binds<'_>,
    number: &str,
    n: u64,
) -> Result<Vec<Listed>, StoreError> {
    let query = sqlx::query_as!(
        Listed,
        r#"SELECT t.id AS "id!", t.reference_number, t.transaction_type, t.category,
                     t.status, t.channel, t.amount, t.narration, t.session_id,
                     t.originator_account_number, t.originator_account_name,
                     t.originator_bank_code, t.originator_bank_name,
                     t.created_at AS "created_at: DateTime<Utc>",
                     a.account_number, a.account_name,
                     t.balance_after AS "balance_after!: i64"
                   FROM transactions t JOIN accounts a ON a.id = t.account_id
                   WHERE t.business_id = ?1
                     AND t.account_id = (SELECT o.id FROM accounts o
                       WHERE o.business_id = ?1 AND o.account_number = ?13)
                     AND (t.created_at, t.id) < (COALESCE(?2, ?14), COALESCE(?3, ''))
                     AND t.created_at >= COALESCE(?4, '') AND t.created_at < COALESCE(?5, ?14)
                     AND (?6 IS NULL OR t.status = ?6)
                     AND (?7 IS NULL OR t.transaction_type = ?7)
                     AND (?8 IS NULL OR t.category = ?8)
                     AND (?9 IS NULL OR t.reference_number = ?9)
                     AND (?10 IS NULL OR t.channel = ?10)
                     AND (?11 IS NULL OR t.narration_key LIKE ?11 ESCAPE '\')
                   ORDER BY t.created_at DESC, t.id DESC LIMIT -1 OFFSET ?12"#,
        binds.business_id,
        binds.cursor_at,
        binds.cursor_id,
        binds.from,
        binds.until,
        binds.status,
        binds.kind,
        binds.category,
        binds.reference,
        binds.channel,
        binds.search,
        binds.offset,
        number,
        NO_TIME_BOUND
    );
    first_rows(query.fetch(store.pool()), n).await
}

/// The business's settlements.
async fn business_settlements(
    store: &Store,
    binds: &Binds<'_>,
    n: u64,
) -> Result<Vec<Listed>, StoreError> {
    let query = sqlx::query_as!(
        Listed,
        r#"SELECT t.id AS "id!", t.reference_number, t.transaction_type, t.category,
                     t.status, t.channel, t.amount, t.narration, t.session_id,
                     t.originator_account_number, t.originator_account_name,
                     t.originator_bank_code, t.originator_bank_name,
                     t.created_at AS "created_at: DateTime<Utc>",
                     a.account_number, a.account_name,
                     t.balance_after AS "balance_after!: i64"
                   FROM settlements s JOIN transactions t ON t.id = s.id
                   JOIN accounts a ON a.id = t.account_id
                   WHERE t.business_id = ?1
                     AND (t.created_at, t.id) < (COALESCE(?2, ?14), COALESCE(?3, ''))
                     AND t.created_at >= COALESCE(?4, '') AND t.created_at < COALESCE(?5, ?14)
                     AND (?6 IS NULL OR t.status = ?6)
                     AND (?7 IS NULL OR t.transaction_type = ?7)
                     AND (?8 IS NULL OR t.category = ?8)
                     AND (?9 IS NULL OR t.reference_number = ?9)
                     AND (?10 IS NULL OR t.channel = ?10)
                     AND (?11 IS NULL OR t.narration_key LIKE ?11 ESCAPE '\')
                   ORDER BY t.created_at DESC, t.id DESC LIMIT -1 OFFSET ?12"#,
        binds.business_id,
        binds.cursor_at,
        binds.cursor_id,
        binds.from,
        binds.until,
        binds.status,
        binds.kind,
        binds.category,
        binds.reference,
        binds.channel,
        binds.search,
        binds.offset,
        None::<&str>,
        NO_TIME_BOUND
    );
    first_rows(query.fetch(store.pool()), n).await
}

/// One account's settlements.
async fn account_settlements(
    store: &Store,
    binds: &Binds<'_>,
    number: &str,
    n: u64,
) -> Result<Vec<Listed>, StoreError> {
    let query = sqlx::query_as!(
        Listed,
        r#"SELECT t.id AS "id!", t.reference_number, t.transaction_type, t.category,
                     t.status, t.channel, t.amount, t.narration, t.session_id,
                     t.originator_account_number, t.originator_account_name,
                     t.originator_bank_code, t.originator_bank_name,
                     t.created_at AS "created_at: DateTime<Utc>",
                     a.account_number, a.account_name,
                     t.balance_after AS "balance_after!: i64"
                   FROM settlements s JOIN transactions t ON t.id = s.id
                   JOIN accounts a ON a.id = t.account_id
                   WHERE t.business_id = ?1
                     AND t.account_id = (SELECT o.id FROM accounts o
                       WHERE o.business_id = ?1 AND o.account_number = ?13)
                     AND (t.created_at, t.id) < (COALESCE(?2, ?14), COALESCE(?3, ''))
                     AND t.created_at >= COALESCE(?4, '') AND t.created_at < COALESCE(?5, ?14)
                     AND (?6 IS NULL OR t.status = ?6)
                     AND (?7 IS NULL OR t.transaction_type = ?7)
                     AND (?8 IS NULL OR t.category = ?8)
                     AND (?9 IS NULL OR t.reference_number = ?9)
                     AND (?10 IS NULL OR t.channel = ?10)
                     AND (?11 IS NULL OR t.narration_key LIKE ?11 ESCAPE '\')
                   ORDER BY t.created_at DESC, t.id DESC LIMIT -1 OFFSET ?12"#,
        binds.business_id,
        binds.cursor_at,
        binds.cursor_id,
        binds.from,
        binds.until,
        binds.status,
        binds.kind,
        binds.category,
        binds.reference,
        binds.channel,
        binds.search,
        binds.offset,
        number,
        NO_TIME_BOUND
    );
    first_rows(query.fetch(store.pool()), n).await
}
