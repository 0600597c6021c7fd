//! `groups`: a business's payouts queued in one process share a transaction and its `COMMIT`;
//! each member undoes only its own work, and a failed commit fails every member.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{new_id, TestDb};
use kobo_store_postgres::groups::{Groups, Member};
use kobo_store_postgres::Pool;
use sqlx::Executor;

/// Waits, in bounded steps, until `count` payouts of `business` wait for its turn.
async fn until_waiting(groups: &Groups, business: &str, count: usize) {
    for _ in 0..500 {
        if groups.waiting(business) >= count {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{count} payouts never queued for the turn");
}

async fn numbers(pool: &Pool, table: &str) -> Vec<i32> {
    sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT n FROM {table} ORDER BY n"
    )))
    .fetch_all(pool.inner())
    .await
    .unwrap()
}

/// Nine payouts queue behind one that holds its business's turn. The first leaves the
/// transaction open for them; of the nine, each inside its savepoint, a third commit, a third
/// roll back, and a third fail a statement and are dropped (as a refused payout is): what is
/// kept is exactly the committed members' work, in one `COMMIT` for more than one payout, and
/// every member that committed was told so only once its work was durable.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn queued_payouts_share_a_commit_and_each_undoes_only_its_own() {
    let Paying {
        db,
        groups,
        business,
        first,
    } = paying().await;
    let queued: Vec<_> = (1..=9)
        .map(|n: i32| {
            let (groups, pool, business) = (groups.clone(), db.pool.clone(), business.clone());
            tokio::spawn(async move {
                let mut member = groups.begin(&pool, &business).await.unwrap();
                member.guard().await.unwrap();
                sqlx::query("INSERT INTO paid VALUES ($1)")
                    .bind(n)
                    .execute(&mut **member.tx())
                    .await
                    .unwrap();
                match n % 3 {
                    0 => member.commit(None).await.map(|()| true).unwrap(),
                    1 => {
                        let failed = sqlx::query("SELECT 1 / 0")
                            .execute(&mut **member.tx())
                            .await;
                        assert!(failed.is_err());
                        member.abandon();
                        false
                    }
                    _ => member.rollback().await.map(|()| false).unwrap(),
                }
            })
        })
        .collect();
    until_waiting(&groups, &business, 9).await;
    first.commit(None).await.unwrap();
    let mut committed = 0;
    for member in queued {
        committed += usize::from(member.await.unwrap());
    }
    assert_eq!(committed, 3);
    // Abandoned members undo their savepoints in tasks of their own: the turn is free once
    // they have, and a lone payout commits at once.
    let last = groups.begin(&db.pool, &business).await.unwrap();
    last.commit(None).await.unwrap();
    assert_eq!(numbers(&db.pool, "paid").await, vec![0, 3, 6, 9]);
    let (commits, payouts) = groups.commits();
    assert_eq!(payouts, 4 + 1, "the committed members and the lone payout");
    assert!(commits < payouts, "{commits} commits for {payouts} payouts");
    db.finish().await;
}

/// Members after the group's first join it without a savepoint, as a payout whose one
/// statement writes everything or nothing does: the even ones write and commit without one;
/// the odd ones' first statement writes nothing (a gate that refused), after which each sets
/// its savepoint, writes, and rolls back (a refusal). What is kept is exactly the even ones'
/// work, and a savepoint was set only for the odd ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn members_that_write_everything_or_nothing_need_no_savepoint() {
    let Paying {
        db,
        groups,
        business,
        first,
    } = paying().await;
    let queued: Vec<_> = (1..=6)
        .map(|n: i32| {
            let (groups, pool, business) = (groups.clone(), db.pool.clone(), business.clone());
            tokio::spawn(async move {
                let mut member = groups.begin(&pool, &business).await.unwrap();
                let written = sqlx::query("INSERT INTO paid SELECT $1 WHERE $1 % 2 = 0")
                    .bind(n)
                    .execute(&mut **member.tx())
                    .await
                    .unwrap();
                if written.rows_affected() == 1 {
                    return member.commit(None).await.map(|()| true).unwrap();
                }
                member.wrote_nothing();
                member.guard().await.unwrap();
                insert(&mut member, n).await;
                member.rollback().await.map(|()| false).unwrap()
            })
        })
        .collect();
    until_waiting(&groups, &business, 6).await;
    first.commit(None).await.unwrap();
    let mut committed = 0;
    for member in queued {
        committed += usize::from(member.await.unwrap());
    }
    assert_eq!(committed, 3);
    assert_eq!(numbers(&db.pool, "paid").await, vec![0, 2, 4, 6]);
    assert_eq!(
        groups.savepoints(),
        3,
        "one for each member that was refused"
    );
    db.finish().await;
}

/// A member after the group's first that ran a statement without a savepoint, and then does
/// not commit (its payout refused after writing, its caller gone mid-statement): its work can
/// be undone only with the group's. The group fails: the members before it, which had left
/// their work to the group's commit, are told it failed, and nothing of the group is kept; the
/// next payout begins a group of its own. The members queue one after another, so that the
/// one that fails comes last.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_member_that_wrote_without_a_savepoint_and_did_not_commit_fails_its_group() {
    let Paying {
        db,
        groups,
        business,
        first,
    } = paying().await;
    let mut queued = Vec::new();
    for n in 1..=3 {
        let (its_groups, pool, its_business) = (groups.clone(), db.pool.clone(), business.clone());
        queued.push(tokio::spawn(async move {
            let mut member = its_groups.begin(&pool, &its_business).await.unwrap();
            insert(&mut member, n).await;
            if n < 3 {
                return member.commit(None).await;
            }
            member.abandon();
            Ok(())
        }));
        until_waiting(&groups, &business, n as usize).await;
    }
    assert!(
        first.commit(None).await.is_err(),
        "the first member's work is not kept"
    );
    for (n, member) in queued.into_iter().enumerate().take(2) {
        let told = member.await.unwrap();
        assert!(told.is_err(), "member {} was told {told:?}", n + 1);
    }
    assert!(numbers(&db.pool, "paid").await.is_empty());
    let mut next = groups.begin(&db.pool, &business).await.unwrap();
    insert(&mut next, 7).await;
    next.commit(None).await.unwrap();
    assert_eq!(numbers(&db.pool, "paid").await, vec![7]);
    db.finish().await;
}

/// A business's group begun: its first member has paid 0 into the table `paid` and holds the
/// turn.
struct Paying {
    db: TestDb,
    groups: Arc<Groups>,
    business: String,
    first: Member,
}

async fn paying() -> Paying {
    let db = TestDb::empty().await;
    db.pool
        .inner()
        .execute("CREATE TABLE paid (n INT PRIMARY KEY)")
        .await
        .unwrap();
    let groups = Arc::new(Groups::default());
    let business = new_id();
    let mut first = groups.begin(&db.pool, &business).await.unwrap();
    insert(&mut first, 0).await;
    Paying {
        db,
        groups,
        business,
        first,
    }
}

async fn insert(member: &mut Member, n: i32) {
    sqlx::query("INSERT INTO paid VALUES ($1)")
        .bind(n)
        .execute(&mut **member.tx())
        .await
        .unwrap();
}

/// A group whose `COMMIT` fails: no member is told its work is committed, none of it is kept,
/// and the next payout commits as usual. The `COMMIT` is made to fail by a deferred foreign
/// key, which PostgreSQL checks only then; in the bank it would be the connection or the
/// server.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failed_group_commit_fails_every_member_and_keeps_nothing() {
    let db = TestDb::empty().await;
    for ddl in [
        "CREATE TABLE parent (n INT PRIMARY KEY)",
        "CREATE TABLE child (n INT PRIMARY KEY, parent INT REFERENCES parent \
         DEFERRABLE INITIALLY DEFERRED)",
        "CREATE TABLE paid (n INT PRIMARY KEY)",
    ] {
        db.pool.inner().execute(ddl).await.unwrap();
    }
    let groups = Arc::new(Groups::default());
    let business = new_id();
    let mut first = groups.begin(&db.pool, &business).await.unwrap();
    sqlx::query("INSERT INTO child VALUES (1, 1)")
        .execute(&mut **first.tx())
        .await
        .unwrap();
    let queued: Vec<_> = (1..=3)
        .map(|n: i32| {
            let (groups, pool, business) = (groups.clone(), db.pool.clone(), business.clone());
            tokio::spawn(async move {
                let mut member = groups.begin(&pool, &business).await.unwrap();
                sqlx::query("INSERT INTO paid VALUES ($1)")
                    .bind(n)
                    .execute(&mut **member.tx())
                    .await
                    .unwrap();
                member.commit(None).await
            })
        })
        .collect();
    until_waiting(&groups, &business, 3).await;
    assert!(
        first.commit(None).await.is_err(),
        "the group's COMMIT failed"
    );
    for member in queued {
        assert!(
            member.await.unwrap().is_err(),
            "a member of the failed group"
        );
    }
    assert!(numbers(&db.pool, "paid").await.is_empty());
    assert!(numbers(&db.pool, "child").await.is_empty());
    let mut next = groups.begin(&db.pool, &business).await.unwrap();
    sqlx::query("INSERT INTO paid VALUES (7)")
        .execute(&mut **next.tx())
        .await
        .unwrap();
    next.commit(None).await.unwrap();
    assert_eq!(numbers(&db.pool, "paid").await, vec![7]);
    assert_eq!(groups.commits(), (1, 1));
    db.finish().await;
}

/// The member that commits a group goes away during the `COMMIT` (its client gone, its
/// request timed out): the `COMMIT` goes on, and the other members are told their work is
/// committed, as it is. Dropped with its caller, it told them the group had failed, and a
/// payout without a key, retried, would have been paid twice. The `COMMIT` is made slow by a
/// deferred trigger that sleeps.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_group_committed_by_a_caller_gone_is_committed_for_all() {
    let db = TestDb::empty().await;
    for ddl in [
        "CREATE TABLE paid (n INT PRIMARY KEY)",
        "CREATE FUNCTION slowly() RETURNS trigger LANGUAGE plpgsql AS \
         $$ BEGIN PERFORM pg_sleep(0.5); RETURN NULL; END $$",
        "CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON paid \
         DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.n = 0) EXECUTE FUNCTION slowly()",
    ] {
        db.pool.inner().execute(ddl).await.unwrap();
    }
    let groups = Arc::new(Groups::default());
    let business = new_id();
    let mut first = groups.begin(&db.pool, &business).await.unwrap();
    sqlx::query("INSERT INTO paid VALUES (1)")
        .execute(&mut **first.tx())
        .await
        .unwrap();
    let last = {
        let (groups, pool, business) = (groups.clone(), db.pool.clone(), business.clone());
        tokio::spawn(async move {
            let mut last = groups.begin(&pool, &business).await.unwrap();
            sqlx::query("INSERT INTO paid VALUES (0)")
                .execute(&mut **last.tx())
                .await
                .unwrap();
            // Gone a tenth of a second into the half-second `COMMIT`.
            let gone = tokio::time::timeout(Duration::from_millis(100), last.commit(None)).await;
            assert!(gone.is_err(), "the COMMIT outlasted its caller");
        })
    };
    until_waiting(&groups, &business, 1).await;
    first
        .commit(None)
        .await
        .expect("the first member's work is committed");
    last.await.unwrap();
    assert_eq!(numbers(&db.pool, "paid").await, vec![0, 1]);
    db.finish().await;
}
