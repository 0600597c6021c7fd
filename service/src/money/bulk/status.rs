//! Where a bulk transfer stands, and what became of an item, as they are stored and as the API
//! spells them (`BulkTransferStatus`, `BulkItemOutcome`). Several are spelt as a transfer's
//! statuses are, so this is, beside `money/transfers/status.rs`, the one file that may spell
//! them (the shape rule `transfer-status-literals`).

/// Its items being checked by the validation worker.
pub const VALIDATING: &str = "validating";
/// Every item checked; ready to be authorised.
pub const VALIDATED: &str = "validated";
/// It cannot be paid (no valid item, or one invalid under `refuse_batch`).
pub const INVALID: &str = "invalid";
/// Cancelled before it executed.
pub const CANCELLED: &str = "cancelled";
/// Authorised and reserved, held whole for a checker by the approval policy.
pub const PENDING_APPROVAL: &str = "pending_approval";
/// Rejected by a checker, its reservation released.
pub const REJECTED: &str = "rejected";
/// Authorised and reserved (approved, when held), waiting for its `execute_at`.
pub const SCHEDULED: &str = "scheduled";
/// Its items being paid.
pub const EXECUTING: &str = "executing";
/// Held, and not reviewed before its `expires_at`: its reservation released.
pub const EXPIRED: &str = "expired";

/// The statuses a batch not yet authorised can be cancelled from (nothing to release).
pub const CANCELLABLE: &[&str] = &[VALIDATING, VALIDATED, INVALID];
/// The statuses of a batch whose money is reserved and not yet paid out: cancelling it
/// releases its reservation.
pub const HOLDING: &[&str] = &[PENDING_APPROVAL, SCHEDULED];

/// An item's outcome when it was refused as it was to be paid (no transfer was written).
pub const ITEM_FAILED: &str = "failed";
/// An item not paid: the batch is not executing yet, it is invalid, or it ended unpaid.
pub const ITEM_UNPAID: &str = "unpaid";
