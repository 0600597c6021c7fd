//! Webhooks: the six operations and `test_webhook`, and delivery to a real HTTP receiver on a
//! loopback port that can fail, hang and recover.

mod delivery;
mod operations;
mod receiver;
mod safety;
