-- A settlement is an inbound credit cleared to an account: the collection's transaction
-- itself. Its row in `settlements` repeated the transaction's business, account, reference,
-- amount and time, with a status always `success`; the API's settlement listing read only
-- whether a transaction had one. A payout to a virtual account wrote it as a second row, with
-- two index entries (issue 31). The transaction now says it (`settled`), and `settlements`
-- is a view of the settled transactions with the columns the table had, so that every
-- settlement of an upgraded database is still read as it was.
-- Every settlement must be what its transaction says, or the upgrade stops with nothing done
-- rather than lose a value (the code has only ever written them so).
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM settlements s LEFT JOIN transactions t ON t.id = s.id
               WHERE t.id IS NULL OR t.business_id <> s.business_id
                  OR t.account_id <> s.account_id OR t.reference_number <> s.reference
                  OR t.amount <> s.amount OR s.status <> 'success'
                  OR s.settlement_date <> t.created_at OR s.created_at <> t.created_at) THEN
        RAISE EXCEPTION 'a settlement differs from its transaction: migration 0023 would lose it';
    END IF;
END
$$;
ALTER TABLE transactions ADD COLUMN settled boolean NOT NULL DEFAULT false;
UPDATE transactions t SET settled = true FROM settlements s WHERE s.id = t.id;
DROP TABLE settlements;
CREATE VIEW settlements AS
    SELECT id, business_id, account_id, reference_number AS reference, amount,
        'success'::text AS status, created_at AS settlement_date, created_at
    FROM transactions WHERE settled;
