//! How PostgreSQL's refusals are classified, on a real server.

mod common;

use common::TestDb;
use kobo_store_postgres::StoreError;

/// A write that reaches a server in read-only mode (a standby, or a primary still being
/// promoted during a failover: SQLSTATE 25006) is the database out of reach now (`97`,
/// retry), not a mistake (`96`): the retry reaches the new primary.
#[tokio::test]
async fn a_write_refused_as_read_only_is_unavailable() {
    let db = TestDb::migrated().await;
    let mut tx = db.pool.inner().begin().await.unwrap();
    sqlx::query("SET TRANSACTION READ ONLY")
        .execute(&mut *tx)
        .await
        .unwrap();
    let refused = sqlx::query("CREATE TABLE written_on_a_standby (n int)")
        .execute(&mut *tx)
        .await
        .unwrap_err();
    assert_eq!(
        refused
            .as_database_error()
            .and_then(|e| e.code())
            .as_deref(),
        Some("25006")
    );
    let classified = StoreError::from(refused);
    assert!(classified.is_unavailable(), "{classified:?}");
    drop(tx);
    // A mistake in a statement stays a failure.
    let mistake = sqlx::query("SELECT no_such_column FROM businesses")
        .execute(db.pool.inner())
        .await
        .unwrap_err();
    let classified = StoreError::from(mistake);
    assert!(
        matches!(classified, StoreError::Failed(_)),
        "{classified:?}"
    );
    db.finish().await;
}
