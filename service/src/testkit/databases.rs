//! The kits' PostgreSQL databases: each a copy of a migrated template made once per schema,
//! dropped with its kit, reached directly or through a transaction pooler.

use sqlx::Connection;

use crate::kernel::store::Store;

/// Whether the kits' PostgreSQL stores go through a transaction pooler
/// (`KOBO_TEST_POSTGRES_POOLER_URL`): a test of what a server session of its own does (a
/// setting applied to new connections, a lock held by hand on the pool) asks, and says so.
pub fn through_pooler() -> bool {
    pooler_url().is_some()
}

/// `KOBO_TEST_POSTGRES_POOLER_URL`, when set and not empty.
fn pooler_url() -> Option<String> {
    std::env::var("KOBO_TEST_POSTGRES_POOLER_URL")
        .ok()
        .filter(|url| !url.is_empty())
}

/// Opens a kit's store at `url`: on PostgreSQL through a transaction pooler when
/// `KOBO_TEST_POSTGRES_POOLER_URL` names one (PgBouncer in transaction mode, in front of the
/// same server: `.ci/scale` runs the PostgreSQL suite that way), `url` itself otherwise.
pub(super) async fn open_store(url: &str) -> Store {
    let pooler = pooler_url().filter(|_| url.starts_with("postgres"));
    let opened = match pooler {
        Some(pooler) => {
            let name = url.rsplit('/').next().unwrap_or_default();
            let connection = crate::kernel::store::Connection {
                pool_mode: crate::kernel::store::PoolMode::Transaction,
                direct_url: Some(url.to_owned()),
            };
            Store::connect_with(&database_url(&pooler, name), &connection).await
        }
        None => Store::connect(url).await,
    };
    opened.unwrap_or_else(|error| panic!("cannot open the test store {url}: {error:#}"))
}

/// A database created for one kit and dropped with it.
pub(super) struct PostgresDatabase {
    admin_url: String,
    name: String,
    pub(super) url: String,
}

impl PostgresDatabase {
    /// A fresh database, cloned from the migrated template of this build's schema (made on
    /// first use, by whichever test process gets there first), so no test pays for the
    /// migrations.
    pub(super) async fn create() -> PostgresDatabase {
        PostgresDatabase::open(true).await
    }

    /// A fresh database: the migrated template's copy, or empty.
    pub(super) async fn open(from_template: bool) -> PostgresDatabase {
        let admin_url = std::env::var("KOBO_TEST_POSTGRES_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into());
        let name = format!("kobo_test_{}", uuid::Uuid::new_v4().simple());
        let mut admin = sqlx::postgres::PgConnection::connect(&admin_url)
            .await
            .unwrap_or_else(|error| {
                panic!(
                    "PostgreSQL is unreachable at {admin_url} (set KOBO_TEST_POSTGRES_URL): {error}"
                )
            });
        if from_template {
            copy_template(&mut admin, &admin_url, &name).await;
        } else {
            admin_execute(&mut admin, format!("CREATE DATABASE \"{name}\"")).await;
        }
        let _ = admin.close().await;
        let url = database_url(&admin_url, &name);
        PostgresDatabase {
            admin_url,
            name,
            url,
        }
    }
}

/// Creates database `name` as a copy of the migrated template of this build's schema, making
/// the template first if no test process has yet.
async fn copy_template(admin: &mut sqlx::postgres::PgConnection, admin_url: &str, name: &str) {
    // Test processes run at once: one at a time makes the template or copies it.
    admin_execute(admin, format!("SELECT pg_advisory_lock({TEMPLATE_LOCK})")).await;
    let template = format!(
        "kobo_template_{}",
        Store::schema_fingerprint(crate::kernel::store::Backend::Postgres)
    );
    let exists: bool =
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)")
            .bind(&template)
            .fetch_one(&mut *admin)
            .await
            .expect("pg_database answers");
    if !exists {
        make_template(admin, admin_url, &template).await;
    }
    admin_execute(
        admin,
        format!("CREATE DATABASE \"{name}\" TEMPLATE \"{template}\""),
    )
    .await;
    admin_execute(admin, format!("SELECT pg_advisory_unlock({TEMPLATE_LOCK})")).await;
}

/// The advisory lock under which test processes make or copy the template.
const TEMPLATE_LOCK: i64 = 0x6b6f_626f;

/// Migrates a database under a temporary name and renames it to `template` once complete (a
/// process killed half-way leaves no half-made template), then drops the templates of other
/// schemas.
async fn make_template(admin: &mut sqlx::postgres::PgConnection, admin_url: &str, template: &str) {
    let building = format!("{template}_building");
    admin_execute(
        admin,
        format!("DROP DATABASE IF EXISTS \"{building}\" WITH (FORCE)"),
    )
    .await;
    admin_execute(admin, format!("CREATE DATABASE \"{building}\"")).await;
    let store = Store::connect(&database_url(admin_url, &building))
        .await
        .unwrap_or_else(|error| panic!("cannot open {building}: {error:#}"));
    store
        .migrate()
        .await
        .unwrap_or_else(|error| panic!("cannot migrate {building}: {error:#}"));
    crate::platform::permissions::seed_built_in_roles(&store)
        .await
        .unwrap_or_else(|error| panic!("cannot seed {building}: {error:#}"));
    store.close().await;
    admin_execute(
        admin,
        format!("ALTER DATABASE \"{building}\" RENAME TO \"{template}\""),
    )
    .await;
    let stale: Vec<String> = sqlx::query_scalar(
        "SELECT datname FROM pg_database WHERE datname LIKE 'kobo\\_template\\_%' AND datname <> $1",
    )
    .bind(template)
    .fetch_all(&mut *admin)
    .await
    .expect("pg_database answers");
    for name in stale {
        admin_execute(
            admin,
            format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"),
        )
        .await;
    }
}

async fn admin_execute(admin: &mut sqlx::postgres::PgConnection, sql: String) {
    sqlx::query(sqlx::AssertSqlSafe(sql.clone()))
        .execute(admin)
        .await
        .unwrap_or_else(|error| panic!("{sql}: {error}"));
}

impl Drop for PostgresDatabase {
    fn drop(&mut self) {
        let admin_url = self.admin_url.clone();
        let name = self.name.clone();
        // Drop runs inside the test's runtime: do the async work on a thread of its own.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build();
            if let Ok(runtime) = runtime {
                runtime.block_on(async move {
                    if let Ok(mut admin) = sqlx::postgres::PgConnection::connect(&admin_url).await {
                        let sql = format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)");
                        let _ = sqlx::query(sqlx::AssertSqlSafe(sql))
                            .execute(&mut admin)
                            .await;
                        let _ = admin.close().await;
                    }
                });
            }
        })
        .join();
    }
}

/// `admin_url` with its database name replaced by `name` (query parameters kept).
fn database_url(admin_url: &str, name: &str) -> String {
    let (base, query) = match admin_url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (admin_url, None),
    };
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let server = match base[scheme_end..].find('/') {
        Some(slash) => &base[..scheme_end + slash],
        None => base,
    };
    match query {
        Some(query) => format!("{server}/{name}?{query}"),
        None => format!("{server}/{name}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_urls_swap_the_database_name() {
        assert_eq!(
            database_url("postgres://postgres@127.0.0.1:5432/test", "kobo_test_1"),
            "postgres://postgres@127.0.0.1:5432/kobo_test_1"
        );
        assert_eq!(
            database_url("postgres://u:p@db/x?sslmode=disable", "k"),
            "postgres://u:p@db/k?sslmode=disable"
        );
        assert_eq!(
            database_url("postgres://db:5432", "k"),
            "postgres://db:5432/k"
        );
    }
}
