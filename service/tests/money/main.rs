//! The accounts-and-ledger issue's behaviours, through the router, each on SQLite and on
//! PostgreSQL (`kobo::on_both_stores!`), every scenario ending with `kobo ledger verify`.
//! Races run on PostgreSQL with two `kobo` processes. One test binary:
//! `cargo test -p kobo --test money <module or scenario>`.

mod accounts;
mod approvals;
mod bench;
mod beneficiaries;
mod bulk;
mod customers;
mod dashboard;
mod execution;
mod exports;
mod inbound;
mod isolation;
mod lost_commits;
mod names;
mod pay;
mod payroll;
mod races;
mod scheduled;
mod statements;
mod support;
mod transactions;
mod transfer_workload;
mod transfers;
mod verify;
mod workload;
