-- The environment the database serves (issue 56). Sandbox and production never share money,
-- so a database belongs to one of them: recorded the first time a server or the operator's
-- CLI opens it (`kobo::platform::deployment`), and every process of the other refused.
CREATE TABLE deployment (
    id SMALLINT PRIMARY KEY CHECK (id = 1),
    environment TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
    recorded_at TIMESTAMPTZ NOT NULL
);
