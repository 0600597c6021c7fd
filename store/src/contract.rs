//! The stores' contract: each resource's operations, declared once, with their documentation.
//!
//! A resource (`accounts`, `transfers`, ...) is a trait of [`Backend`], declared with
//! [`contract!`](crate::contract) in the module of this crate that holds its rows. Each store
//! crate implements it for its backend, in its own SQL, checked by sqlx against its own schema
//! (`impl Accounts for kobo_store_sqlite::Backend { ... }`); nothing else declares the
//! operation again. Its callers do not name a trait: the same declaration gives them one free
//! function per operation (the macro `<resource>_functions!`, which `contract!` writes):
//!
//! - `kobo`'s datastore asks for them with `dispatch`: each hands its call to the store the
//!   bank runs on, by its handles' `on()` (`Store`, `Tx` and `Conn` in scope name the bank's);
//! - a store crate asks for them with `backend Backend`, for its own tests and its own
//!   statements that call each other.
//!
//! An operation takes one of three handles, written before its name: `tx` (a transaction of the
//! caller's: `&mut Tx`), `conn` (where a read runs: the pool or a transaction, `impl
//! Into<Conn>`), or `pool` (the pool, for what runs outside any transaction of the caller's:
//! `&Store` in the bank). `auth_tx` is a `tx` whose write changes what authentication reads (a
//! session revoked, a member's password or role, a business's secret): the bank's function
//! marks its transaction so (`Tx::touch_auth`), and its cached sessions are read again once it
//! commits. `auth_pool` is the same for a `pool` operation that commits a transaction of its
//! own (`auth_changed_here`). Its result is always `Result<_, StoreError>`, so only the value is
//! written. docs/decisions.md, "One contract per resource", says why a macro and not a
//! generic bank.

/// A store: the handles its statements run on.
pub trait Backend {
    /// What statements outside a caller's transaction run on (SQLite's store, PostgreSQL's
    /// pool).
    type Pool: Sync;
    /// A transaction of the store.
    type Tx: Send;
    /// Where a read runs: the pool or a transaction.
    type Conn<'c>: Send;
}

/// Declares a resource of the stores' contract: the trait its backends implement, and the
/// macro `$functions` that writes its callers' free functions (the module docs).
///
/// ```ignore
/// contract! {
///     /// `daily_transfer_totals`: what each business sent on each Lagos day.
///     pub trait DailyTotals in daily_totals, functions daily_totals_functions {
///         /// The business's total of `day` (kobo), if anything was counted on it.
///         tx fn spent(business_id: &str, day: &str) -> Option<i64>;
///     }
/// }
/// ```
#[macro_export]
macro_rules! contract {
    (
        $(#[$trait_doc:meta])*
        pub trait $Trait:ident in $module:ident, functions $functions:ident {
            $(
                $(#[$doc:meta])*
                $handle:ident fn $name:ident ($($arg:ident : $ty:ty),* $(,)?) -> $ret:ty;
            )*
        }
    ) => {
        $(#[$trait_doc])*
        pub trait $Trait: $crate::contract::Backend {
            $(
                $crate::contract!(@declare $handle [$(#[$doc])*] $name ($($arg : $ty),*) -> $ret);
            )*
        }

        $crate::contract!(@functions ($) $Trait $module $functions {
            $( [$(#[$doc])*] $handle $name ($($arg : $ty),*) -> $ret; )*
        });
    };

    // The trait's method for each handle (`auth_tx` is a `tx` to the stores).
    (@declare auth_tx [$($doc:tt)*] $name:ident ($($arg:ident : $ty:ty),*) -> $ret:ty) => {
        $crate::contract!(@declare tx [$($doc)*] $name ($($arg : $ty),*) -> $ret);
    };
    (@declare auth_pool [$($doc:tt)*] $name:ident ($($arg:ident : $ty:ty),*) -> $ret:ty) => {
        $crate::contract!(@declare pool [$($doc)*] $name ($($arg : $ty),*) -> $ret);
    };
    (@declare tx [$($doc:tt)*] $name:ident ($($arg:ident : $ty:ty),*) -> $ret:ty) => {
        $($doc)*
        fn $name(tx: &mut Self::Tx, $($arg: $ty),*)
            -> impl ::core::future::Future<Output = Result<$ret, $crate::error::StoreError>> + Send;
    };
    (@declare conn [$($doc:tt)*] $name:ident ($($arg:ident : $ty:ty),*) -> $ret:ty) => {
        $($doc)*
        fn $name(conn: Self::Conn<'_>, $($arg: $ty),*)
            -> impl ::core::future::Future<Output = Result<$ret, $crate::error::StoreError>> + Send;
    };
    (@declare pool [$($doc:tt)*] $name:ident ($($arg:ident : $ty:ty),*) -> $ret:ty) => {
        $($doc)*
        fn $name(pool: &Self::Pool, $($arg: $ty),*)
            -> impl ::core::future::Future<Output = Result<$ret, $crate::error::StoreError>> + Send;
    };

    // The macro that writes the callers' free functions, one mode each.
    (@functions ($d:tt) $Trait:ident $module:ident $functions:ident {
        $( [$($doc:tt)*] $handle:ident $name:ident ($($arg:ident : $ty:ty),*) -> $ret:ty; )*
    }) => {
        #[macro_export]
        macro_rules! $functions {
            (dispatch) => {
                $(
                    $crate::contract!(@dispatch $module $Trait [$($doc)*] $handle $name
                        ($($arg : $ty),*) -> $ret);
                )*
            };
            (backend $d backend:ty) => {
                $(
                    $crate::contract!(@backend $d backend, $module $Trait [$($doc)*] $handle $name
                        ($($arg : $ty),*) -> $ret);
                )*
            };
        }
    };

    // `dispatch`: the bank's function, on the store its handle is of (`Store`, `Tx`, `Conn`,
    // `On`, `Sqlite`, `Postgres` and `StoreError` in scope where it is asked for).
    (@dispatch $module:ident $Trait:ident [$($doc:tt)*] tx $name:ident
        ($($arg:ident : $ty:ty),*) -> $ret:ty) => {
        $($doc)*
        pub async fn $name(tx: &mut Tx, $($arg: $ty),*) -> Result<$ret, StoreError> {
            match tx.on() {
                On::Sqlite(on) => <Sqlite as $crate::$module::$Trait>::$name(on, $($arg),*).await,
                On::Postgres(on) => {
                    <Postgres as $crate::$module::$Trait>::$name(on, $($arg),*).await
                }
            }
        }
    };
    (@dispatch $module:ident $Trait:ident [$($doc:tt)*] auth_tx $name:ident
        ($($arg:ident : $ty:ty),*) -> $ret:ty) => {
        $($doc)*
        pub async fn $name(tx: &mut Tx, $($arg: $ty),*) -> Result<$ret, StoreError> {
            // It changes what authentication reads: once it commits, this process reads its
            // cached sessions again.
            tx.touch_auth();
            match tx.on() {
                On::Sqlite(on) => <Sqlite as $crate::$module::$Trait>::$name(on, $($arg),*).await,
                On::Postgres(on) => {
                    <Postgres as $crate::$module::$Trait>::$name(on, $($arg),*).await
                }
            }
        }
    };
    (@dispatch $module:ident $Trait:ident [$($doc:tt)*] conn $name:ident
        ($($arg:ident : $ty:ty),*) -> $ret:ty) => {
        $($doc)*
        pub async fn $name(conn: impl Into<Conn<'_>>, $($arg: $ty),*) -> Result<$ret, StoreError> {
            match conn.into().on() {
                On::Sqlite(on) => <Sqlite as $crate::$module::$Trait>::$name(on, $($arg),*).await,
                On::Postgres(on) => {
                    <Postgres as $crate::$module::$Trait>::$name(on, $($arg),*).await
                }
            }
        }
    };
    (@dispatch $module:ident $Trait:ident [$($doc:tt)*] pool $name:ident
        ($($arg:ident : $ty:ty),*) -> $ret:ty) => {
        $($doc)*
        pub async fn $name(store: &Store, $($arg: $ty),*) -> Result<$ret, StoreError> {
            match store.on() {
                On::Sqlite(on) => <Sqlite as $crate::$module::$Trait>::$name(on, $($arg),*).await,
                On::Postgres(on) => {
                    <Postgres as $crate::$module::$Trait>::$name(on, $($arg),*).await
                }
            }
        }
    };

    (@dispatch $module:ident $Trait:ident [$($doc:tt)*] auth_pool $name:ident
        ($($arg:ident : $ty:ty),*) -> $ret:ty) => {
        $($doc)*
        pub async fn $name(store: &Store, $($arg: $ty),*) -> Result<$ret, StoreError> {
            let done = match store.on() {
                On::Sqlite(on) => <Sqlite as $crate::$module::$Trait>::$name(on, $($arg),*).await,
                On::Postgres(on) => {
                    <Postgres as $crate::$module::$Trait>::$name(on, $($arg),*).await
                }
            };
            // Committed in a transaction of its own, it changed what authentication reads.
            auth_changed_here();
            done
        }
    };

    // `backend B`: a store crate's own function, on its backend `B`.
    (@backend $backend:ty, $module:ident $Trait:ident [$($doc:tt)*] tx $name:ident
        ($($arg:ident : $ty:ty),*) -> $ret:ty) => {
        $($doc)*
        pub async fn $name(
            tx: &mut <$backend as $crate::contract::Backend>::Tx,
            $($arg: $ty),*
        ) -> Result<$ret, $crate::error::StoreError> {
            <$backend as $crate::$module::$Trait>::$name(tx, $($arg),*).await
        }
    };
    (@backend $backend:ty, $module:ident $Trait:ident [$($doc:tt)*] auth_tx $name:ident
        ($($arg:ident : $ty:ty),*) -> $ret:ty) => {
        $crate::contract!(@backend $backend, $module $Trait [$($doc)*] tx $name
            ($($arg : $ty),*) -> $ret);
    };
    (@backend $backend:ty, $module:ident $Trait:ident [$($doc:tt)*] auth_pool $name:ident
        ($($arg:ident : $ty:ty),*) -> $ret:ty) => {
        $crate::contract!(@backend $backend, $module $Trait [$($doc)*] pool $name
            ($($arg : $ty),*) -> $ret);
    };
    (@backend $backend:ty, $module:ident $Trait:ident [$($doc:tt)*] conn $name:ident
        ($($arg:ident : $ty:ty),*) -> $ret:ty) => {
        $($doc)*
        pub async fn $name<'c>(
            conn: impl Into<<$backend as $crate::contract::Backend>::Conn<'c>>,
            $($arg: $ty),*
        ) -> Result<$ret, $crate::error::StoreError> {
            <$backend as $crate::$module::$Trait>::$name(conn.into(), $($arg),*).await
        }
    };
    (@backend $backend:ty, $module:ident $Trait:ident [$($doc:tt)*] pool $name:ident
        ($($arg:ident : $ty:ty),*) -> $ret:ty) => {
        $($doc)*
        pub async fn $name(
            pool: &<$backend as $crate::contract::Backend>::Pool,
            $($arg: $ty),*
        ) -> Result<$ret, $crate::error::StoreError> {
            <$backend as $crate::$module::$Trait>::$name(pool, $($arg),*).await
        }
    };
}
