//! Where a transfer is, and how it moves: one type for the statuses, and one pure function,
//! [`TransferStatus::next`], for every change of status that transfers, approvals and the NIP
//! worker make. Its tests walk every allowed and every refused move.
//!
//! ```text
//!                 ┌─ approved, intra-bank ──────────────────────────▶ success
//!  pending_approval ─ approved, inter-bank ─▶ processing ─ settled ──▶ success
//!     │  │  └─ rejected / cancelled / expired          └─ reversed ──▶ reversed
//!  (made: held)                               (made: inter-bank, not held)
//! ```
//!
//! A new transfer starts `pending_approval` (held by the approval policy), `processing`
//! (inter-bank) or `success` (intra-bank, settled in its transaction). `failed` (refused at
//! execution, nothing moved) is a status of the API that no move leads to: a refusal writes no
//! transfer.

use std::fmt;

use generated_server::models;

/// A transfer's status, as stored and as the API names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TransferStatus {
    /// Held by the approval policy, its funds reserved.
    PendingApproval,
    /// Debited and sent over NIP; the outcome is not known yet.
    Processing,
    Success,
    /// Refused at execution, nothing moved (no move leads here: see the module).
    Failed,
    /// Failed at NIP after the debit: the money came back.
    Reversed,
    /// Held, then rejected by a reviewer: nothing moved.
    Rejected,
    /// Held, then withdrawn by its initiator: nothing moved.
    Cancelled,
    /// Held and not reviewed in time: nothing moved.
    Expired,
}

/// What happens to a transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Move {
    /// A checker approved the hold; an intra-bank transfer settles at once.
    Approve {
        intra: bool,
    },
    Reject,
    Cancel,
    Expire,
    /// NIP confirmed the transfer.
    Settle,
    /// NIP confirmed its failure: the money goes back.
    Reverse,
}

/// A move the transfer's status does not allow: another request or worker moved it first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refused {
    pub from: TransferStatus,
    pub requested: Move,
}

const ALL: [TransferStatus; 8] = [
    TransferStatus::PendingApproval,
    TransferStatus::Processing,
    TransferStatus::Success,
    TransferStatus::Failed,
    TransferStatus::Reversed,
    TransferStatus::Rejected,
    TransferStatus::Cancelled,
    TransferStatus::Expired,
];

impl TransferStatus {
    /// The status a new transfer starts in.
    pub fn initial(held: bool, intra: bool) -> TransferStatus {
        match (held, intra) {
            (true, _) => TransferStatus::PendingApproval,
            (false, true) => TransferStatus::Success,
            (false, false) => TransferStatus::Processing,
        }
    }

    /// Where `requested` takes a transfer in this status, or why it cannot.
    pub fn next(self, requested: Move) -> Result<TransferStatus, Refused> {
        use TransferStatus::*;
        let next = match (self, requested) {
            (PendingApproval, Move::Approve { intra: true }) => Success,
            (PendingApproval, Move::Approve { intra: false }) => Processing,
            (PendingApproval, Move::Reject) => Rejected,
            (PendingApproval, Move::Cancel) => Cancelled,
            (PendingApproval, Move::Expire) => Expired,
            (Processing, Move::Settle) => Success,
            (Processing, Move::Reverse) => Reversed,
            (from, requested) => return Err(Refused { from, requested }),
        };
        Ok(next)
    }

    /// Whether its amount counts toward its business's daily limit: once its money moved. A
    /// hold counts from its approval, on the approval's day.
    pub fn counts_toward_limit(self) -> bool {
        matches!(self, TransferStatus::Processing | TransferStatus::Success)
    }

    /// The event a transfer that enters this status is announced by, if any.
    pub fn event(self) -> Option<&'static str> {
        match self {
            TransferStatus::PendingApproval => Some("transfer.pending_approval"),
            TransferStatus::Processing => None,
            TransferStatus::Success => Some("transfer.success"),
            TransferStatus::Failed => Some("transfer.failed"),
            TransferStatus::Reversed => Some("transfer.reversed"),
            TransferStatus::Rejected => Some("transfer.rejected"),
            TransferStatus::Cancelled => Some("transfer.cancelled"),
            TransferStatus::Expired => Some("transfer.expired"),
        }
    }

    /// The coarse status the source names: pending, success, failed or reversed.
    pub fn coarse(self) -> models::TransactionStatus {
        match self {
            TransferStatus::Success => models::TransactionStatus::Success,
            TransferStatus::PendingApproval | TransferStatus::Processing => {
                models::TransactionStatus::Pending
            }
            TransferStatus::Reversed => models::TransactionStatus::Reversed,
            TransferStatus::Failed
            | TransferStatus::Rejected
            | TransferStatus::Cancelled
            | TransferStatus::Expired => models::TransactionStatus::Failed,
        }
    }

    /// As stored and as the API names it.
    pub fn as_str(self) -> &'static str {
        match self {
            TransferStatus::PendingApproval => "pending_approval",
            TransferStatus::Processing => "processing",
            TransferStatus::Success => "success",
            TransferStatus::Failed => "failed",
            TransferStatus::Reversed => "reversed",
            TransferStatus::Rejected => "rejected",
            TransferStatus::Cancelled => "cancelled",
            TransferStatus::Expired => "expired",
        }
    }

    /// The stored `text`'s status.
    pub fn parse(text: &str) -> Option<TransferStatus> {
        ALL.into_iter().find(|status| status.as_str() == text)
    }

    pub fn view(self) -> models::TransferStatus {
        match self {
            TransferStatus::PendingApproval => models::TransferStatus::PendingApproval,
            TransferStatus::Processing => models::TransferStatus::Processing,
            TransferStatus::Success => models::TransferStatus::Success,
            TransferStatus::Failed => models::TransferStatus::Failed,
            TransferStatus::Reversed => models::TransferStatus::Reversed,
            TransferStatus::Rejected => models::TransferStatus::Rejected,
            TransferStatus::Cancelled => models::TransferStatus::Cancelled,
            TransferStatus::Expired => models::TransferStatus::Expired,
        }
    }
}

impl fmt::Display for TransferStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a transfer stands with the approval policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApprovalState {
    /// It ran at once.
    NotRequired,
    AwaitingApproval,
    Approved,
    /// Rejected, cancelled or expired: nothing moved.
    Rejected,
}

impl ApprovalState {
    /// The approval state of a new transfer.
    pub fn initial(held: bool) -> ApprovalState {
        if held {
            ApprovalState::AwaitingApproval
        } else {
            ApprovalState::NotRequired
        }
    }

    /// The approval state a held transfer leaves the hold with, for the status it goes to.
    pub fn after(status: TransferStatus) -> ApprovalState {
        match status {
            TransferStatus::Processing | TransferStatus::Success => ApprovalState::Approved,
            TransferStatus::PendingApproval => ApprovalState::AwaitingApproval,
            _ => ApprovalState::Rejected,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalState::NotRequired => "not_required",
            ApprovalState::AwaitingApproval => "awaiting_approval",
            ApprovalState::Approved => "approved",
            ApprovalState::Rejected => "rejected",
        }
    }

    pub fn parse(text: &str) -> Option<ApprovalState> {
        [
            ApprovalState::NotRequired,
            ApprovalState::AwaitingApproval,
            ApprovalState::Approved,
            ApprovalState::Rejected,
        ]
        .into_iter()
        .find(|state| state.as_str() == text)
    }

    pub fn view(self) -> models::ApprovalStatus {
        match self {
            ApprovalState::NotRequired => models::ApprovalStatus::NotRequired,
            ApprovalState::AwaitingApproval => models::ApprovalStatus::AwaitingApproval,
            ApprovalState::Approved => models::ApprovalStatus::Approved,
            ApprovalState::Rejected => models::ApprovalStatus::Rejected,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOVES: [Move; 7] = [
        Move::Approve { intra: true },
        Move::Approve { intra: false },
        Move::Reject,
        Move::Cancel,
        Move::Expire,
        Move::Settle,
        Move::Reverse,
    ];

    /// Every allowed move, and nothing else: the table the whole bank follows.
    #[test]
    fn every_move_is_allowed_or_refused_as_the_table_says() {
        use TransferStatus::*;
        let allowed = [
            (PendingApproval, Move::Approve { intra: true }, Success),
            (PendingApproval, Move::Approve { intra: false }, Processing),
            (PendingApproval, Move::Reject, Rejected),
            (PendingApproval, Move::Cancel, Cancelled),
            (PendingApproval, Move::Expire, Expired),
            (Processing, Move::Settle, Success),
            (Processing, Move::Reverse, Reversed),
        ];
        for from in ALL {
            for requested in MOVES {
                let expected = allowed
                    .iter()
                    .find(|(f, m, _)| *f == from && *m == requested)
                    .map(|(_, _, to)| *to);
                match (from.next(requested), expected) {
                    (Ok(to), Some(expected)) => assert_eq!(to, expected, "{from} {requested:?}"),
                    (Err(refused), None) => {
                        assert_eq!(refused, Refused { from, requested })
                    }
                    (got, expected) => {
                        panic!("{from} {requested:?}: got {got:?}, expected {expected:?}")
                    }
                }
            }
        }
    }

    #[test]
    fn only_moved_money_counts_and_the_ends_are_final() {
        for status in ALL {
            let counted = matches!(status, TransferStatus::Processing | TransferStatus::Success);
            assert_eq!(status.counts_toward_limit(), counted, "{status}");
            let moves = MOVES.iter().filter(|m| status.next(**m).is_ok()).count();
            let open = matches!(
                status,
                TransferStatus::PendingApproval | TransferStatus::Processing
            );
            assert_eq!(moves > 0, open, "{status}");
        }
    }

    #[test]
    fn a_new_transfer_starts_where_its_money_is() {
        assert_eq!(
            TransferStatus::initial(true, true),
            TransferStatus::PendingApproval
        );
        assert_eq!(
            TransferStatus::initial(false, true),
            TransferStatus::Success
        );
        assert_eq!(
            TransferStatus::initial(false, false),
            TransferStatus::Processing
        );
    }

    #[test]
    fn names_read_back_and_match_the_api() {
        for status in ALL {
            assert_eq!(TransferStatus::parse(status.as_str()), Some(status));
            assert_eq!(status.view().to_string(), status.as_str());
        }
        assert_eq!(TransferStatus::parse("settled"), None);
        for state in [
            ApprovalState::NotRequired,
            ApprovalState::AwaitingApproval,
            ApprovalState::Approved,
            ApprovalState::Rejected,
        ] {
            assert_eq!(ApprovalState::parse(state.as_str()), Some(state));
            assert_eq!(state.view().to_string(), state.as_str());
        }
    }
}
