-- An inbound credit the core banking provider notifies is booked once per NIP session (issue
-- 32): a notification sent again finds its credit by this index, and two at once cannot both
-- insert. Only credits that carry a session id are in it (inbound credits; intra-bank credits
-- and reversals carry none), so a payout writes no entry to it.
CREATE UNIQUE INDEX transactions_credit_session ON transactions (session_id)
    WHERE session_id IS NOT NULL AND transaction_type = 'credit';
