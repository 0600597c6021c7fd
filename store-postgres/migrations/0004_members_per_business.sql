-- A person may be a member of several businesses, each membership with its own password:
-- emails are unique within a business, not across Kobo (an address held by one business
-- neither blocks another business from inviting it nor tells it that the address is taken).
DROP INDEX members_email;
CREATE UNIQUE INDEX members_business_email ON members (business_id, email);
CREATE INDEX members_email ON members (email);
