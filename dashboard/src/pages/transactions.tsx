// Transactions and settlements, with the spec's filters and keyset paging.
import { useState } from "preact/hooks";
import { call, client, type Schemas } from "../api";
import { naira, when } from "../money";
import { navigate, pick, useFilters, useLocation, withQuery } from "../router";
import { Badge, chosen, Empty, ErrorNote, Field, Link, Pager, useCursorPages } from "../ui";

type TransactionFilters = Schemas["DashboardTransactionFilters"];
type SettlementFilters = Schemas["SettlementFilters"];

const PAGE_SIZE = 20;

const TRANSACTION_FILTERS = ["account_number", "start_date", "end_date", "transaction_type", "status", "reference_number", "search"] as const;

/**
 * The transactions of the business (its filters in the page's address, so a reload, a bookmark
 * or Back keeps them), or of one account when `accountNumber` is given.
 */
export function TransactionsList({ accountNumber }: { accountNumber?: string }) {
  const { query, route } = useLocation();
  const fromAddress = accountNumber
    ? {}
    : (Object.fromEntries(TRANSACTION_FILTERS.map((name) => [name, query.get(name) ?? undefined])) as TransactionFilters);
  const [draft, setDraft] = useState<TransactionFilters>(chosen(fromAddress));
  const [local, setLocal] = useState<TransactionFilters>({});
  const [problem, setProblem] = useState<string | null>(null);
  const filters = accountNumber ? local : chosen(fromAddress);
  const setFilters = (next: TransactionFilters) => {
    const number = next.account_number?.trim();
    if (number && !/^\d{10}$/.test(number)) return setProblem("Account: an account number has 10 digits.");
    setProblem(null);
    if (accountNumber) setLocal(next);
    else navigate(withQuery(route, { ...next }));
  };
  const applied = chosen({ ...filters, account_number: accountNumber ?? filters.account_number });
  const pages = useCursorPages(
    async (cursor) =>
      call(
        client.POST("/api/v1/transaction/web/fetch_transactions", {
          body: { filters: applied, limit: PAGE_SIZE, ...cursor },
        }),
      ),
    JSON.stringify(applied),
  );
  const edit = (change: Partial<TransactionFilters>) => setDraft({ ...draft, ...change });
  return (
    <>
      <form
        noValidate
        class="filters"
        onSubmit={(event) => {
          event.preventDefault();
          setFilters(draft);
        }}
      >
        {!accountNumber && (
          <Field label="Account">
            <input name="account_number" inputMode="numeric" value={draft.account_number ?? ""} onInput={(e) => edit({ account_number: e.currentTarget.value })} />
          </Field>
        )}
        <Field label="From">
          <input name="start_date" type="date" value={draft.start_date ?? ""} onInput={(e) => edit({ start_date: e.currentTarget.value })} />
        </Field>
        <Field label="To">
          <input name="end_date" type="date" value={draft.end_date ?? ""} onInput={(e) => edit({ end_date: e.currentTarget.value })} />
        </Field>
        <Field label="Type">
          <select name="transaction_type" value={draft.transaction_type ?? ""} onChange={(e) => edit({ transaction_type: (e.currentTarget.value || undefined) as TransactionFilters["transaction_type"] })}>
            <option value="">Any</option>
            <option value="credit">Credit (in)</option>
            <option value="debit">Debit (out)</option>
          </select>
        </Field>
        <Field label="Status">
          <select name="status" value={draft.status ?? ""} onChange={(e) => edit({ status: (e.currentTarget.value || undefined) as TransactionFilters["status"] })}>
            <option value="">Any</option>
            <option value="success">Success</option>
            <option value="pending">Pending</option>
            <option value="failed">Failed</option>
            <option value="reversed">Reversed</option>
          </select>
        </Field>
        <Field label="Reference">
          <input name="reference_number" value={draft.reference_number ?? ""} onInput={(e) => edit({ reference_number: e.currentTarget.value })} />
        </Field>
        <Field label="Search">
          <input name="search" type="search" placeholder="Narration or reference" value={draft.search ?? ""} onInput={(e) => edit({ search: e.currentTarget.value })} />
        </Field>
        <button type="submit">Filter</button>
      </form>
      {problem && (
        <div class="notice error" role="alert">
          <strong>{problem}</strong>
        </div>
      )}
      <ErrorNote error={pages.error} />
      {pages.items.length === 0 && !pages.loading ? (
        <Empty>No transactions match.</Empty>
      ) : (
        <table class="list" aria-busy={pages.loading}>
          <thead>
            <tr>
              <th>When</th>
              <th>Reference</th>
              <th>Account</th>
              <th>Narration</th>
              <th class="amount">Amount</th>
              <th>Status</th>
            </tr>
          </thead>
          <tbody>
            {pages.items.map((row) => (
              <tr key={row.id} data-reference={row.reference_number}>
                <td data-label="When">{when(row.created_at)}</td>
                <td data-label="Reference">
                  {row.reference_number.startsWith("TRF-") ? (
                    <Link to={`transfers/${encodeURIComponent(row.reference_number)}`}>
                      <span class="mono small">{row.reference_number}</span>
                    </Link>
                  ) : (
                    <span class="mono small">{row.reference_number}</span>
                  )}
                </td>
                <td data-label="Account">
                  <Link to={`accounts/${row.account_number}`}>{row.account_number}</Link>
                </td>
                <td data-label="Narration">{row.narration}</td>
                <td data-label="Amount" class={`amount ${row.transaction_type}`}>
                  {row.transaction_type === "debit" ? "−" : "+"}
                  {naira(row.amount)}
                </td>
                <td data-label="Status">
                  <Badge value={row.status} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager pages={pages} label="Transactions" />
    </>
  );
}

const SETTLEMENT_FILTERS = ["account_number", "start_date", "end_date", "reference"] as const;

/** The settlements of the business (its filters in the page's address), or of one account. */
export function SettlementsList({ accountNumber }: { accountNumber?: string }) {
  const { applied: filters, draft, setDraft, apply } = useFilters<SettlementFilters>((query) => pick(query, SETTLEMENT_FILTERS), Boolean(accountNumber));
  const [problem, setProblem] = useState<string | null>(null);
  const setFilters = (next: SettlementFilters) => {
    const number = next.account_number?.trim();
    if (number && !/^\d{10}$/.test(number)) return setProblem("Account: an account number has 10 digits.");
    setProblem(null);
    apply(chosen(next));
  };
  const applied = chosen({ ...filters, account_number: accountNumber ?? filters.account_number });
  const pages = useCursorPages(
    async (cursor) =>
      call(
        client.POST("/api/v1/transaction/web/fetch_settlement_transactions", {
          body: { filters: applied, limit: PAGE_SIZE, ...cursor },
        }),
      ),
    JSON.stringify(applied),
  );
  const edit = (change: Partial<SettlementFilters>) => setDraft({ ...draft, ...change });
  return (
    <>
      <form
        noValidate
        class="filters"
        onSubmit={(event) => {
          event.preventDefault();
          setFilters(draft);
        }}
      >
        {!accountNumber && (
          <Field label="Account">
            <input name="account_number" inputMode="numeric" value={draft.account_number ?? ""} onInput={(e) => edit({ account_number: e.currentTarget.value })} />
          </Field>
        )}
        <Field label="From">
          <input name="start_date" type="date" value={draft.start_date ?? ""} onInput={(e) => edit({ start_date: e.currentTarget.value })} />
        </Field>
        <Field label="To">
          <input name="end_date" type="date" value={draft.end_date ?? ""} onInput={(e) => edit({ end_date: e.currentTarget.value })} />
        </Field>
        <Field label="Reference">
          <input name="reference" value={draft.reference ?? ""} onInput={(e) => edit({ reference: e.currentTarget.value })} />
        </Field>
        <button type="submit">Filter</button>
      </form>
      {problem && (
        <div class="notice error" role="alert">
          <strong>{problem}</strong>
        </div>
      )}
      <ErrorNote error={pages.error} />
      {pages.items.length === 0 && !pages.loading ? (
        <Empty>No settlements match.</Empty>
      ) : (
        <table class="list" aria-busy={pages.loading}>
          <thead>
            <tr>
              <th>Settled</th>
              <th>Reference</th>
              <th>Account</th>
              <th class="amount">Amount</th>
              <th>Status</th>
            </tr>
          </thead>
          <tbody>
            {pages.items.map((row) => (
              <tr key={row.id}>
                <td data-label="Settled">{when(row.settlement_date)}</td>
                <td data-label="Reference">
                  <span class="mono small">{row.reference}</span>
                </td>
                <td data-label="Account">
                  <Link to={`accounts/${row.account_number}`}>{row.account_number}</Link>
                </td>
                <td data-label="Amount" class="amount credit">
                  {naira(row.amount)}
                </td>
                <td data-label="Status">
                  <Badge value={row.status} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager pages={pages} label="Settlements" />
    </>
  );
}

export function TransactionsPage() {
  return (
    <section>
      <h1>Transactions</h1>
      <p class="muted">Money in (credits) and out (debits) on every account, newest first.</p>
      <TransactionsList />
    </section>
  );
}

export function SettlementsPage() {
  return (
    <section>
      <h1>Settlements</h1>
      <p class="muted">Inbound credits cleared into the business's accounts, newest first.</p>
      <SettlementsList />
    </section>
  );
}
