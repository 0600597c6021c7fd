//! A database of its own for each test: created with a random name on 127.0.0.1:5432 (user
//! postgres), dropped by [`TestDb::finish`].

#![allow(dead_code)]

use chrono::{DateTime, DurationRound, Utc};
use kobo_store_postgres::Pool;
use sqlx::{Executor, PgPool};

const SERVER: &str = "postgres://postgres@127.0.0.1:5432";

pub struct TestDb {
    /// The store's pool; `pool.inner()` is sqlx's, for statements of the test's own.
    pub pool: Pool,
    name: String,
    finished: bool,
}

impl TestDb {
    /// A new database migrated to the crate's schema.
    pub async fn migrated() -> TestDb {
        let db = TestDb::empty().await;
        kobo_store_postgres::MIGRATOR
            .run(db.pool.inner())
            .await
            .expect("migrations apply");
        db
    }

    /// A new database with no table.
    pub async fn empty() -> TestDb {
        let name = format!("kobo_pg_test_{}", uuid::Uuid::new_v4().simple());
        let admin = PgPool::connect(&format!("{SERVER}/postgres"))
            .await
            .expect("PostgreSQL on 127.0.0.1:5432");
        // A database's name cannot be a parameter: the name is ours, made above.
        admin
            .execute(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .await
            .expect("create the test database");
        admin.close().await;
        let pool = PgPool::connect(&format!("{SERVER}/{name}"))
            .await
            .expect("connect to the test database");
        TestDb {
            pool: pool.into(),
            name,
            finished: false,
        }
    }

    /// Closes the pool and drops the database.
    pub async fn finish(self) {
        self.pool.inner().close().await;
        let admin = PgPool::connect(&format!("{SERVER}/postgres"))
            .await
            .unwrap();
        admin
            .execute(sqlx::AssertSqlSafe(format!(
                "DROP DATABASE {} WITH (FORCE)",
                self.name
            )))
            .await
            .unwrap();
        admin.close().await;
    }
}

/// Now, as a column keeps it: to the microsecond.
pub fn now() -> DateTime<Utc> {
    Utc::now()
        .duration_trunc(chrono::Duration::microseconds(1))
        .unwrap()
}

pub fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}
