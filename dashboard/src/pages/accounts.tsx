// Accounts with their balances and totals, opening accounts, and one account's page.
import { useState } from "preact/hooks";
import { call, client, newIdempotencyKey, type Schemas } from "../api";
import { naira, when } from "../money";
import { can, isSandbox } from "../session";
import { navigate, useLocation, withQuery } from "../router";
import { Badge, chosen, Empty, ErrorNote, Field, Link, Notice, Pager, useAction, useCursorPages, useLoad } from "../ui";
import { ownAccounts } from "../picker";
import { SettlementsList, TransactionsList } from "./transactions";

type SummaryFilters = Pick<Schemas["FetchAccountSummariesRequest"], "account_type" | "status" | "search">;

function Metrics({ round }: { round: number }) {
  const metrics = useLoad(async () => (await call(client.POST("/api/v1/account/web/get_total_account_metrics", { body: {} }))).data, `metrics-${round}`);
  if (metrics.error) return <ErrorNote error={metrics.error} />;
  const m = metrics.value;
  return (
    <div class="metrics" data-testid="metrics">
      <div class="metric">
        <span class="label">Total balance</span>
        <strong data-testid="total-balance">{m ? naira(m.total_business_balance) : "…"}</strong>
      </div>
      <div class="metric">
        <span class="label">Collected</span>
        <strong>{m ? naira(m.total_volume_collected) : "…"}</strong>
      </div>
      <div class="metric">
        <span class="label">Active accounts</span>
        <strong data-testid="active-accounts">{m?.total_active_accounts?.toLocaleString() ?? "…"}</strong>
      </div>
      <div class="metric">
        <span class="label">Customer accounts</span>
        <strong data-testid="customer-accounts">{m?.total_virtual_accounts?.toLocaleString() ?? "…"}</strong>
      </div>
    </div>
  );
}

const TYPE_WORDS: Record<string, string> = { pool: "Main", current: "Current", virtual: "Customer" };

export function AccountsPage() {
  const { query } = useLocation();
  const filters: SummaryFilters = chosen({
    account_type: (query.get("type") ?? undefined) as SummaryFilters["account_type"],
    status: (query.get("status") ?? undefined) as SummaryFilters["status"],
    search: query.get("search") ?? undefined,
  });
  const [draft, setDraft] = useState<SummaryFilters>(filters);
  const [opening, setOpening] = useState<"current" | "customer" | null>(null);
  const [opened, setOpened] = useState<Schemas["Account"] | null>(null);
  const [round, setRound] = useState(0);
  // Unfiltered, the business's own accounts (main first) come before its customers', which may be
  // thousands: they are paged apart, newest first, and found by the search.
  const unfiltered = !filters.search && !filters.account_type && !filters.status;
  const own = useLoad(async () => (unfiltered ? ownAccounts(true) : []), `own-${unfiltered}-${round}`);
  const listed: SummaryFilters = unfiltered ? { account_type: "virtual" } : filters;
  const pages = useCursorPages(
    async (cursor) => call(client.POST("/api/v1/account/web/fetch_account_summaries", { body: { ...listed, limit: 20, ...cursor } })),
    `${JSON.stringify(listed)}|${round}`,
  );
  const done = (account: Schemas["Account"]) => {
    setOpened(account);
    setOpening(null);
    // The list and the totals both count the new account.
    setRound((n) => n + 1);
  };
  return (
    <section>
      <div class="heading">
        <h1>Accounts</h1>
        <div class="actions">
          {can("/api/v1/account/web/create_account") && (
            <button type="button" class="secondary" onClick={() => setOpening(opening === "current" ? null : "current")}>
              Open a current account
            </button>
          )}
          {can("/api/v1/account/web/create_customer_account") && (
            <button type="button" class="secondary" onClick={() => setOpening(opening === "customer" ? null : "customer")}>
              Open a customer account
            </button>
          )}
        </div>
      </div>
      <Metrics round={round} />
      {opened && (
        <Notice kind="success">
          Opened <Link to={`accounts/${opened.account_number}`}>{opened.account_name}</Link>, account number{" "}
          <strong data-testid="opened-account">{opened.account_number}</strong>.
        </Notice>
      )}
      {opening === "current" && <OpenCurrentAccount onOpened={done} />}
      {opening === "customer" && <OpenCustomerAccount onOpened={done} />}
      <form
        noValidate
        class="filters"
        role="search"
        onSubmit={(event) => {
          event.preventDefault();
          navigate(withQuery("accounts", { search: draft.search?.trim(), type: draft.account_type, status: draft.status }));
        }}
      >
        <Field label="Find an account">
          <input name="search" type="search" placeholder="A name or a number" value={draft.search ?? ""} onInput={(e) => setDraft({ ...draft, search: e.currentTarget.value })} />
        </Field>
        <Field label="Type">
          <select
            name="account_type"
            value={draft.account_type ?? ""}
            onChange={(e) => setDraft({ ...draft, account_type: (e.currentTarget.value || undefined) as SummaryFilters["account_type"] })}
          >
            <option value="">Any</option>
            <option value="normal">Main and current</option>
            <option value="current">Current</option>
            <option value="virtual">Customer</option>
          </select>
        </Field>
        <Field label="Status">
          <select name="status" value={draft.status ?? ""} onChange={(e) => setDraft({ ...draft, status: (e.currentTarget.value || undefined) as SummaryFilters["status"] })}>
            <option value="">Any</option>
            {["active", "inactive", "blocked", "closed", "pending"].map((status) => (
              <option value={status}>{status}</option>
            ))}
          </select>
        </Field>
        <button type="submit">Find</button>
      </form>
      {unfiltered && (
        <>
          <h2>Your accounts</h2>
          <ErrorNote error={own.error} />
          {own.value && own.value.length > 0 && <AccountTable accounts={own.value} />}
          <h2>Customer accounts</h2>
          <p class="muted">Newest first. Find one by a part of its name or number above.</p>
        </>
      )}
      <ErrorNote error={pages.error} />
      {pages.items.length === 0 && !pages.loading ? <Empty>No accounts match.</Empty> : <AccountTable accounts={pages.items} busy={pages.loading} />}
      <Pager pages={pages} label="Accounts" />
    </section>
  );
}

/** Accounts as rows (cards on a phone, with what matters there: name, number, type, status, balance). */
function AccountTable({ accounts, busy = false }: { accounts: Schemas["AccountSummary"][]; busy?: boolean }) {
  return (
    <table class="list" aria-busy={busy}>
      <thead>
        <tr>
          <th>Account</th>
          <th>Type</th>
          <th>Status</th>
          <th class="amount">Balance</th>
          <th class="amount wide-only">Collected</th>
          <th class="amount wide-only">Sent</th>
          <th class="wide-only">Last collection</th>
        </tr>
      </thead>
      <tbody>
        {accounts.map((account) => (
          <tr key={account.id} data-account={account.account_number}>
            <td data-label="Account">
              <Link to={`accounts/${account.account_number}`}>{account.account_name}</Link>
              <div class="muted mono">{account.account_number}</div>
            </td>
            <td data-label="Type">{account.account_class === "primary" ? "Main" : (TYPE_WORDS[account.account_type] ?? account.account_type)}</td>
            <td data-label="Status">
              <Badge value={account.status} />
            </td>
            <td data-label="Balance" class="amount">
              {naira(account.balance)}
            </td>
            <td data-label="Collected" class="amount wide-only">
              {naira(account.total_collection_amount)}
              <div class="muted">{account.total_collections.toLocaleString()} in</div>
            </td>
            <td data-label="Sent" class="amount wide-only">
              {naira(account.total_transfer_amount)}
              <div class="muted">{account.total_transfers.toLocaleString()} out</div>
            </td>
            <td data-label="Last collection" class="wide-only">{when(account.last_transaction_date)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function OpenCurrentAccount({ onOpened }: { onOpened: (account: Schemas["Account"]) => void }) {
  const [name, setName] = useState("");
  // One key per opening: a retry after a lost answer opens one account, not two.
  const [key] = useState(newIdempotencyKey);
  const action = useAction();
  return (
    <form
      noValidate
      class="card"
      onSubmit={(event) => {
        event.preventDefault();
        void action.run(async () => {
          const answer = await call(
            client.POST("/api/v1/account/web/create_account", {
              body: name.trim() ? { account_name: name.trim() } : {},
              params: { header: { "Idempotency-Key": key } },
            }),
          );
          onOpened(answer.data);
        });
      }}
    >
      <h2>Open a current account</h2>
      <p class="muted">Linked to the main pool account, active at once, balance zero.</p>
      <ErrorNote error={action.error} />
      <Field label="Account name" hint="Optional: the default is the business's name and a number.">
        <input name="account_name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </Field>
      <button type="submit" disabled={action.busy}>
        Open the account
      </button>
    </form>
  );
}

/** The sandbox's test identities (spec/openapi.yaml, "Sandbox"). */
const SANDBOX_IDENTITIES = [
  ["BVN", "22212345678", "Chinedu Obi"],
  ["BVN", "22287654321", "Amaka Nwosu"],
  ["NIN", "70123456789", "Funke Adeyemi"],
  ["NIN", "70198765432", "Ibrahim Musa"],
] as const;

/** `create_customer_account_web`: the member opens the account; no integration credentials. */
function OpenCustomerAccount({ onOpened }: { onOpened: (account: Schemas["Account"]) => void }) {
  const [form, setForm] = useState({ bvn: "", nin: "", email: "", phone: "", account_name: "" });
  // One key per opening: a retry after a lost answer opens one account, not two.
  const [key] = useState(newIdempotencyKey);
  const action = useAction();
  const edit = (change: Partial<typeof form>) => setForm({ ...form, ...change });
  const submit = async () => {
    const body: Schemas["CreateCustomerAccountRequest"] = chosen({
      bvn: form.bvn.trim(),
      nin: form.nin.trim(),
      email: form.email.trim(),
      phone: form.phone.trim(),
      account_name: form.account_name.trim(),
    });
    const answer = await call(
      client.POST("/api/v1/account/web/create_customer_account", {
        body,
        params: { header: { "Idempotency-Key": key } },
      }),
    );
    onOpened(answer.data);
  };
  return (
    <form
      noValidate
      class="card"
      onSubmit={(event) => {
        event.preventDefault();
        void action.run(submit);
      }}
    >
      <h2>Open a customer account</h2>
      <p class="muted">
        A permanent virtual account for one of your customers, after their BVN or NIN is verified. Give at least one of
        them.
      </p>
      {isSandbox() && (
        <Notice>
          Sandbox test identities:{" "}
          {SANDBOX_IDENTITIES.map(([kind, number, name]) => (
            <span class="chip">
              {kind} <code>{number}</code> {name}
            </span>
          ))}
        </Notice>
      )}
      <ErrorNote error={action.error} />
      <div class="grid">
        <Field label="BVN">
          <input name="bvn" inputMode="numeric" value={form.bvn} onInput={(e) => edit({ bvn: e.currentTarget.value })} />
        </Field>
        <Field label="NIN">
          <input name="nin" inputMode="numeric" value={form.nin} onInput={(e) => edit({ nin: e.currentTarget.value })} />
        </Field>
        <Field label="Email" hint="Optional">
          <input name="email" type="email" value={form.email} onInput={(e) => edit({ email: e.currentTarget.value })} />
        </Field>
        <Field label="Phone" hint="Optional, 11 digits (08031234567)">
          <input name="phone" inputMode="tel" value={form.phone} onInput={(e) => edit({ phone: e.currentTarget.value })} />
        </Field>
        <Field label="Account name" hint="Optional: the name on the identity record">
          <input name="account_name" value={form.account_name} onInput={(e) => edit({ account_name: e.currentTarget.value })} />
        </Field>
      </div>
      <button type="submit" disabled={action.busy}>
        Verify and open
      </button>
    </form>
  );
}

export function AccountPage({ accountNumber }: { accountNumber: string }) {
  const [tab, setTab] = useState<"transactions" | "settlements">("transactions");
  const account = useLoad(
    async () => (await call(client.POST("/api/v1/account/web/get_account", { body: { account_number: accountNumber } }))).data,
    accountNumber,
  );
  const a = account.value;
  return (
    <section>
      <p>
        <Link to="accounts">← Accounts</Link>
      </p>
      <ErrorNote error={account.error} />
      {a && (
        <>
          <div class="heading">
            <h1>{a.account_name}</h1>
            <div class="actions">
              {can("/api/v1/account/web/get_account_statement") && (
                <Link to={withQuery("statement", { account: a.account_number })} class="button secondary">
                  Statement
                </Link>
              )}
              {can("/api/v1/transaction/transfer/web/funds_transfer") && a.status === "active" && (
                <Link to={`pay?from=${a.account_number}`} class="button">
                  Pay from this account
                </Link>
              )}
            </div>
          </div>
          <dl class="details">
            <dt>Account number</dt>
            <dd class="mono">{a.account_number}</dd>
            <dt>Balance</dt>
            <dd data-testid="account-balance">{naira(a.balance)}</dd>
            <dt>Type</dt>
            <dd>{a.account_class === "primary" ? "Main account" : a.account_type === "virtual" ? "Customer account" : "Current account"}</dd>
            <dt>Status</dt>
            <dd>
              <Badge value={a.status} />
            </dd>
            {a.parent_account_number && (
              <>
                <dt>Linked to</dt>
                <dd>
                  <Link to={`accounts/${a.parent_account_number}`}>{a.parent_account_number}</Link>
                </dd>
              </>
            )}
            {a.customer && (
              <>
                <dt>Customer</dt>
                <dd>
                  {[a.customer.email, a.customer.phone].filter(Boolean).join(" · ") || "—"} · verified:{" "}
                  {a.customer.verified_identities.join(", ").toUpperCase()}
                </dd>
              </>
            )}
            <dt>Opened</dt>
            <dd>{when(a.created_at)}</dd>
            <dt>Last balance change</dt>
            <dd>{when(a.last_balance_update)}</dd>
          </dl>
        </>
      )}
      {can("/api/v1/transaction/web/fetch_transactions") && (
        <>
          <div class="tabs" role="tablist">
            <button type="button" role="tab" aria-selected={tab === "transactions"} onClick={() => setTab("transactions")}>
              Transactions
            </button>
            <button type="button" role="tab" aria-selected={tab === "settlements"} onClick={() => setTab("settlements")}>
              Settlements
            </button>
          </div>
          {tab === "transactions" ? <TransactionsList accountNumber={accountNumber} /> : <SettlementsList accountNumber={accountNumber} />}
        </>
      )}
    </section>
  );
}
