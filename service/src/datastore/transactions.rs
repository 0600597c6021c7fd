//! `transactions` (one account's side of a journal entry, as a business lists it) and
//! `settlements` (the cleared inbound credits, one per collection, sharing its id).

use sqlx::any::AnyRow;
use sqlx::Row;

use super::batch::{Batch, SqlBatch, Write};
use super::{Conn, FromAnyRow, StoreError, Tx};
use crate::kernel::paging::{self, Conditions, Sql};
use crate::kernel::store::{self, Store};
pub use kobo_store::transactions::{
    Filters, Listing, NewTransaction, Originator, TransactionRow, Window,
};

/// Writes `new` (and its settlement when it is one) as a write of `batch`.
pub fn record_into(batch: &mut Batch, new: NewTransaction) {
    batch.push(Write::Transaction(Box::new(new)));
}

/// [`Write::Transaction`] as statements of `sql`.
pub(super) fn render(sql: &mut SqlBatch, new: NewTransaction) {
    let at = store::timestamp(new.created_at);
    let narration_key = format!("{} {}", new.narration, new.reference_number).to_lowercase();
    let originator = new.originator.as_ref();
    sql.push(
        "INSERT INTO transactions (id, business_id, account_id, entry_id, sequence, \
               reference_number, transaction_type, category, status, channel, amount, narration, \
               narration_key, session_id, originator_account_number, originator_account_name, \
               originator_bank_code, originator_bank_name, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, \
               $18, $19)",
    )
    .bind(new.id.to_string())
    .bind(new.business_id.clone())
    .bind(new.account_id.clone())
    .bind(new.entry_id.clone())
    .bind(new.sequence)
    .bind(new.reference_number.clone())
    .bind(new.transaction_type.clone())
    .bind(new.category.clone())
    .bind(new.status.clone())
    .bind(new.channel.clone())
    .bind(new.amount)
    .bind(new.narration.clone())
    .bind(narration_key)
    .bind(new.session_id.clone())
    .bind(originator.map(|o| o.account_number.clone()))
    .bind(originator.map(|o| o.account_name.clone()))
    .bind(originator.map(|o| o.bank_code.clone()))
    .bind(originator.map(|o| o.bank_name.clone()))
    .bind(at.clone());
    if new.settled {
        sql.push(
            "INSERT INTO settlements (id, business_id, account_id, reference, amount, status, \
                   settlement_date, created_at) VALUES ($1, $2, $3, $4, $5, 'success', $6, $6)",
        )
        .bind(new.id.to_string())
        .bind(new.business_id.clone())
        .bind(new.account_id.clone())
        .bind(new.reference_number.clone())
        .bind(new.amount)
        .bind(at);
    }
}

/// Changes the status of transaction `id` (`pending` becoming `success`, `reversed` or
/// `failed`): its amount and place in the listing never change.
pub async fn set_status(tx: &mut Tx, id: &str, status: &str) -> Result<(), StoreError> {
    sqlx::query("UPDATE transactions SET status = $2 WHERE id = $1")
        .bind(id)
        .bind(status)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Gives transaction `id` the NIP session id its transfer got.
pub async fn set_session_id(tx: &mut Tx, id: &str, session_id: &str) -> Result<(), StoreError> {
    sqlx::query("UPDATE transactions SET session_id = $2 WHERE id = $1")
        .bind(id)
        .bind(session_id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

impl FromAnyRow for TransactionRow {
    fn from_any(row: &AnyRow) -> Result<TransactionRow, StoreError> {
        let optional = |column: &str| store::optional_text(row, column);
        Ok(TransactionRow {
            id: store::uuid(row, "id")?,
            reference_number: store::text(row, "reference_number")?,
            transaction_type: store::text(row, "transaction_type")?,
            category: store::text(row, "category")?,
            status: store::text(row, "status")?,
            channel: store::text(row, "channel")?,
            amount: row.try_get("amount")?,
            narration: store::text(row, "narration")?,
            session_id: optional("session_id")?,
            originator_account_number: optional("originator_account_number")?,
            originator_account_name: optional("originator_account_name")?,
            originator_bank_code: optional("originator_bank_code")?,
            originator_bank_name: optional("originator_bank_name")?,
            created_at: store::time(row, "created_at")?,
            account_number: store::text(row, "account_number")?,
            account_name: store::text(row, "account_name")?,
        })
    }
}

const TRANSACTION_COLUMNS: &str = "t.id, t.reference_number, t.transaction_type, t.category, \
    t.status, t.channel, t.amount, t.narration, t.session_id, t.originator_account_number, \
    t.originator_account_name, t.originator_bank_code, t.originator_bank_name, t.created_at, \
    a.account_number, a.account_name";
const TRANSACTION_FROM: &str = " FROM transactions t JOIN accounts a ON a.id = t.account_id";
const SETTLEMENT_FROM: &str = " FROM settlements s JOIN transactions t ON t.id = s.id \
    JOIN accounts a ON a.id = t.account_id";

/// One page of the business's transactions or settlements, newest first by
/// `(created_at, id)`, at most `window.size + 1` rows.
pub async fn list(
    store: &Store,
    listing: Listing,
    business_id: &str,
    filters: &Filters,
    window: &Window,
) -> Result<Vec<TransactionRow>, StoreError> {
    let sql = list_query("", listing, business_id, filters, window);
    let rows = Conn::Pool(store).fetch_all(sql.query()).await?;
    rows.iter().map(TransactionRow::from_any).collect()
}

/// The statement of [`list`], after `prefix` (`EXPLAIN`, in tests).
fn list_query(
    prefix: &str,
    listing: Listing,
    business_id: &str,
    filters: &Filters,
    window: &Window,
) -> Sql {
    let from = match listing {
        Listing::Transactions => TRANSACTION_FROM,
        Listing::Settlements => SETTLEMENT_FROM,
    };
    let mut sql = Sql::new(&format!("{prefix}SELECT {TRANSACTION_COLUMNS}{from}"));
    let mut conditions = conditions(&mut sql, business_id, filters);
    if let Some(cursor) = &window.cursor {
        let at = sql.arg(cursor.created_at.as_str());
        let id = sql.arg(cursor.id.as_str());
        // A row comparison: both stores answer it from the keyset index as a range, where
        // the equivalent `OR` made PostgreSQL read every row after the cursor (38 ms for a
        // page near the end of 100k rows of one account).
        conditions.add(format!("(t.created_at, t.id) < ({at}, {id})"));
    }
    sql.push(&conditions.where_clause());
    sql.push(" ORDER BY t.created_at DESC, t.id DESC")
        .limit(window.size + 1);
    if let Some(offset) = window.offset {
        let offset = sql.arg(offset);
        sql.push(&format!(" OFFSET {offset}"));
    }
    sql
}

fn conditions(sql: &mut Sql, business_id: &str, filters: &Filters) -> Conditions {
    let mut conditions = Conditions::default();
    conditions.add(format!("t.business_id = {}", sql.arg(business_id)));
    if let Some(number) = &filters.account_number {
        // The account's id as a constant, found once by an uncorrelated subquery: both stores
        // then read `transactions_account_keyset` in order and stop at the page's end. Filtered
        // on the joined account's number instead, PostgreSQL read and sorted every row of the
        // account for each page (27 ms for the first page of 20,000 rows; 0.2 ms now).
        let business = sql.arg(business_id);
        let number = sql.arg(number.as_str());
        conditions.add(format!(
            "t.account_id = (SELECT o.id FROM accounts o \
               WHERE o.business_id = {business} AND o.account_number = {number})"
        ));
    }
    let equal = [
        ("t.created_at >=", &filters.from),
        ("t.created_at <", &filters.until),
        ("t.status =", &filters.status),
        ("t.transaction_type =", &filters.transaction_type),
        ("t.category =", &filters.category),
        ("t.reference_number =", &filters.reference_number),
        ("t.channel =", &filters.channel),
    ];
    for (condition, value) in equal {
        if let Some(value) = value {
            conditions.add(format!("{condition} {}", sql.arg(value.as_str())));
        }
    }
    if let Some(search) = &filters.search {
        let pattern = sql.arg(paging::contains_pattern(search));
        conditions.add(format!("t.narration_key LIKE {pattern} ESCAPE '\\'"));
    }
    conditions
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::paging::Cursor;
    use chrono::{DateTime, Utc};

    /// A page's `LIMIT` is written into the statement, never bound: SQLite plans a statement
    /// again each time a bound `LIMIT` is bound, which was a tenth of a run of pages.
    #[test]
    fn a_pages_limit_is_part_of_the_statement() {
        let window = |offset| Window {
            size: 50,
            cursor: None,
            offset,
        };
        let filters = Filters::default();
        let first = list_query(
            "",
            Listing::Transactions,
            "business",
            &filters,
            &window(None),
        );
        assert!(first.text().ends_with(" LIMIT 51"), "{}", first.text());
        let third = list_query(
            "",
            Listing::Settlements,
            "business",
            &filters,
            &window(Some(100)),
        );
        assert!(
            third.text().contains(" LIMIT 51 OFFSET $"),
            "{}",
            third.text()
        );
    }

    /// The plan of account 1000000014's page of `business`, first or after `cursor`: the query
    /// behind `explain` (each store's), the plan's lines read from `column`.
    async fn account_page_plan(
        store: &Store,
        explain: &str,
        column: &str,
        business: &str,
        cursor: Option<DateTime<Utc>>,
    ) -> String {
        let window = Window {
            size: 50,
            cursor: cursor.map(|at| Cursor {
                created_at: store::timestamp(at),
                id: uuid::Uuid::nil().to_string(),
            }),
            offset: None,
        };
        let filters = Filters {
            account_number: Some("1000000014".into()),
            ..Filters::default()
        };
        let listing = Listing::Transactions;
        let sql = list_query(&format!("{explain} "), listing, business, &filters, &window);
        sql.fetch_all(store.pool())
            .await
            .unwrap()
            .iter()
            .map(|row| row.try_get::<String, _>(column).unwrap())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// One account's page, first or after a cursor, is a range of `transactions_account_keyset`
    /// read in order: no sort, whatever the account's size.
    #[tokio::test]
    async fn an_accounts_pages_read_its_keyset_index_in_order() {
        let (_dir, store) = Store::temporary_sqlite().await;
        store.migrate().await.unwrap();
        let at: DateTime<Utc> = "2026-11-02T09:20:00Z".parse().unwrap();
        for cursor in [None, Some(at)] {
            let plan =
                account_page_plan(&store, "EXPLAIN QUERY PLAN", "detail", "business", cursor).await;
            assert!(plan.contains("transactions_account_keyset"), "{plan}");
            assert!(!plan.contains("TEMP B-TREE"), "{plan}");
        }
    }

    /// The same on PostgreSQL, with statistics of an account of 3,000 transactions: filtered on
    /// the joined account's number, it read all of them and sorted them for every page.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_accounts_pages_are_not_sorted_on_postgres() {
        use crate::kernel::config::{Config, Environment};
        use crate::money::amount::Kobo;
        use crate::testkit::{StoreKind, TestKit};
        let kit = TestKit::start(StoreKind::Postgres, Config::new(Environment::Sandbox)).await;
        let clock = kit.clock.clone();
        let amount = Kobo::parse("1.00").unwrap();
        crate::bench::seed_credits(&kit.store, || clock.now(), "1000000014", 3000, amount, 500)
            .await
            .unwrap();
        let at = kit.clock.now() - chrono::Duration::minutes(1);
        let business = kit.business.business_id.clone();
        for cursor in [None, Some(at)] {
            let plan =
                account_page_plan(&kit.store, "EXPLAIN", "QUERY PLAN", &business, cursor).await;
            assert!(plan.contains("transactions_account_keyset"), "{plan}");
            assert!(!plan.contains("Sort"), "{plan}");
        }
    }
}
