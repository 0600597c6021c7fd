//! The datastore: every statement of the bank, one module per resource (a table, or a few
//! tables that live and die together), as omicron's datastore is cut. The domain calls these
//! functions and reads their typed rows (`kobo-store`); it never builds SQL, binds a parameter
//! or reads a column by name.
//!
//! Each function here hands its call to the store it runs on: `kobo-store-sqlite` or
//! `kobo-store-postgres`, which hold the same modules with the same functions, each with its
//! database's own types and its queries checked against its schema when it is built (sqlx's
//! macros and the offline data committed beside each crate). A function runs one statement
//! (or one round trip) on a transaction ([`Tx`]) or on the pool ([`Conn::Pool`]).
//!
//! The rules a module keeps:
//! - a statement on a table lives in that table's module, in both stores; a join lives in the
//!   module of the rows it returns;
//! - rows are structs with named, typed fields; flags are `bool`, times `DateTime<Utc>`,
//!   amounts `i64` kobo;
//! - a function returns [`StoreError`], classified where it arises; refusals (not found, not
//!   allowed) are the domain's to decide from what the function returns (`Option`, a count of
//!   rows changed, `bool`).

pub mod accounts;
pub mod approval_policies;
pub mod audit;
pub mod batch;
pub mod beneficiaries;
pub mod bulk_transfers;
pub mod businesses;
pub mod customers;
pub mod daily_totals;
pub mod deployment;
pub mod events;
pub mod exports;
pub mod idempotency_keys;
pub mod invitations;
pub mod ledger;
pub mod logs;
pub mod members;
pub mod notifications;
pub mod otps;
pub mod request_budgets;
pub mod roles;
pub mod seeding;
pub mod sequences;
pub mod sessions;
pub mod throttles;
pub mod transactions;
pub mod transfers;
pub mod webhook_endpoints;

use crate::kernel::store::TxOn;
pub use crate::kernel::store::{Store, StoreError, Tx};

/// What the functions of the stores' contract (`kobo_store::contract`) name where the
/// datastore asks for them (`<resource>_functions!(dispatch)`): the bank's handles, and the two
/// backends they hand each call to.
mod contract {
    pub(super) use super::{Conn, On, Store, StoreError, Tx};
    pub(super) use crate::kernel::store::auth_changed_here;
    pub(super) use kobo_store_postgres::Backend as Postgres;
    pub(super) use kobo_store_sqlite::Backend as Sqlite;
}

/// Where a read of the datastore runs: on the pool (a connection of its own, no transaction)
/// or in a transaction the caller holds. `From` either, so a function that reads both ways
/// takes `impl Into<Conn<'_>>`.
pub enum Conn<'c> {
    Pool(&'c Store),
    Tx(&'c mut Tx),
}

impl<'c> From<&'c Store> for Conn<'c> {
    fn from(store: &'c Store) -> Conn<'c> {
        Conn::Pool(store)
    }
}

impl<'c> From<&'c mut Tx> for Conn<'c> {
    fn from(tx: &'c mut Tx) -> Conn<'c> {
        Conn::Tx(tx)
    }
}

/// The same thing on one store or the other: what a contract's functions and the PostgreSQL-only
/// operations match on.
pub(crate) enum On<S, P> {
    Sqlite(S),
    Postgres(P),
}

impl<'c> Conn<'c> {
    pub(crate) fn on(self) -> On<kobo_store_sqlite::Conn<'c>, kobo_store_postgres::Conn<'c>> {
        match self {
            Conn::Pool(store) => match store.on() {
                On::Sqlite(store) => On::Sqlite(store.into()),
                On::Postgres(pool) => On::Postgres(pool.into()),
            },
            Conn::Tx(tx) => match tx.on() {
                On::Sqlite(tx) => On::Sqlite(tx.into()),
                On::Postgres(tx) => On::Postgres(tx.into()),
            },
        }
    }
}

impl Store {
    pub(crate) fn on(&self) -> On<&kobo_store_sqlite::Store, &kobo_store_postgres::Pool> {
        match self {
            Store::Sqlite(store) => On::Sqlite(store),
            Store::Postgres(store) => On::Postgres(store.pool()),
        }
    }
}

impl Tx {
    pub(crate) fn on(&mut self) -> On<&mut kobo_store_sqlite::Tx, &mut kobo_store_postgres::Tx> {
        match &mut self.on {
            TxOn::Sqlite(tx) => On::Sqlite(tx),
            TxOn::Postgres(tx) => On::Postgres(tx.inner()),
        }
    }
}
