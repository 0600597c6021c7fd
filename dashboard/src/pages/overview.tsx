// The overview, the Dashboard's first page: the balances across the business's accounts, the
// money in and out of the last 30 days as a chart (plain SVG, drawn here: nothing is loaded from
// elsewhere), what waits for the member (payments to approve, their own waiting for someone
// else, payments that failed this week) and the latest transactions. Each part is shown when
// the member's role allows what it reads.
import { call, client, type Schemas } from "../api";
import { day, koboOf, koboText, naira, when } from "../money";
import { ownAccounts } from "../picker";
import { can, currentSession } from "../session";
import { countText } from "../waiting";
import { Badge, ErrorNote, Link, useLoad } from "../ui";

type Day = Schemas["CashFlowDay"];

export function OverviewPage() {
  const name = currentSession()?.profile.member.first_name;
  return (
    <section>
      <h1>{name ? `Good to see you, ${name}` : "Overview"}</h1>
      <div class="overview">
        {can("/api/v1/account/web/get_total_account_metrics") && <Balances />}
        {can("/api/v1/transaction/transfer/web/fetch_transfers") && <Waiting />}
        {can("/api/v1/transaction/web/get_cash_flow") && <CashFlow />}
        {can("/api/v1/transaction/web/fetch_transactions") && <Recent />}
      </div>
    </section>
  );
}

function Balances() {
  const loaded = useLoad(async () => {
    const [metrics, own] = await Promise.all([
      call(client.POST("/api/v1/account/web/get_total_account_metrics", { body: {} })),
      ownAccounts(),
    ]);
    return { metrics: metrics.data, own };
  }, "balances");
  const value = loaded.value;
  const ownTotal = (value?.own ?? []).reduce((sum, account) => sum + koboOf(account.balance), 0n);
  const customers = value ? koboOf(value.metrics.total_business_balance) - ownTotal : 0n;
  return (
    <div class="card" data-testid="balances">
      <h2>Balances</h2>
      <ErrorNote error={loaded.error} />
      {value && (
        <>
          <p class="big" data-testid="overview-total">
            {naira(value.metrics.total_business_balance)}
          </p>
          <p class="muted">across every account of the business</p>
          <ul class="plain">
            {value.own.map((account) => (
              <li data-account={account.account_number}>
                <Link to={`accounts/${account.account_number}`}>{account.account_class === "primary" ? `${account.account_name} (main)` : account.account_name}</Link>
                <span class="amount">{naira(account.balance)}</span>
              </li>
            ))}
            <li>
              <Link to="accounts?type=virtual">{(value.metrics.total_virtual_accounts ?? 0).toLocaleString()} customer accounts</Link>
              <span class="amount">₦{koboText(customers)}</span>
            </li>
          </ul>
        </>
      )}
    </div>
  );
}

function CashFlow() {
  const loaded = useLoad(async () => (await call(client.POST("/api/v1/transaction/web/get_cash_flow", { body: { days: 30 } }))).data, "cash-flow");
  const flow = loaded.value;
  return (
    <div class="card wide" data-testid="cash-flow">
      <h2>Money in and out, last 30 days</h2>
      <ErrorNote error={loaded.error} />
      {flow && (
        <>
          <p>
            <span class="legend in">In {naira(flow.money_in)}</span> <span class="legend out">Out {naira(flow.money_out)}</span>
          </p>
          <Chart days={flow.days} />
          <p class="chart-dates muted small" aria-hidden="true">
            <span>{day(flow.start_date)}</span>
            <span>{day(flow.end_date)}</span>
          </p>
          <p class="muted small">
            A bar a day: money in above the line, out below; the tallest bar is {tallest(flow.days)}. Transfers between the
            business's own accounts count both ways.
          </p>
        </>
      )}
    </div>
  );
}

/** The most that moved either way on one day. */
function most(days: Day[]): bigint {
  return days.reduce((max, day) => {
    const both = [koboOf(day.money_in), koboOf(day.money_out)];
    return both.reduce((m, v) => (v > m ? v : m), max);
  }, 0n);
}

function tallest(days: Day[]): string {
  return `₦${koboText(most(days))}`;
}

/** Money in above the line, out below, a bar each per day; a day with anything shows a bar. */
export function Chart({ days }: { days: Day[] }) {
  const width = 600;
  const height = 160;
  const middle = height / 2;
  const room = middle - 4;
  const top = most(days);
  const step = width / Math.max(days.length, 1);
  const bar = Math.max(2, step * 0.7);
  const scale = (kobo: bigint) => (top === 0n || kobo === 0n ? 0 : Math.max(3, (Number((kobo * 10_000n) / top) / 10_000) * room));
  const summary = days.filter((day) => day.credits + day.debits > 0).length;
  return (
    <svg class="chart" viewBox={`0 0 ${width} ${height}`} role="img" aria-label={`Money in and out per day: ${summary} days with movements`}>
      <line class="axis" x1="0" x2={width} y1={middle} y2={middle} />
      {days.map((day, index) => {
        const x = index * step + (step - bar) / 2;
        const up = scale(koboOf(day.money_in));
        const down = scale(koboOf(day.money_out));
        const label = `${day.date}: in ${naira(day.money_in)} (${day.credits}), out ${naira(day.money_out)} (${day.debits})`;
        return (
          <g data-date={day.date}>
            <title>{label}</title>
            {up > 0 && <rect class="in" x={x} y={middle - up} width={bar} height={up} rx="1.5" />}
            {down > 0 && <rect class="out" x={x} y={middle} width={bar} height={down} rx="1.5" />}
          </g>
        );
      })}
    </svg>
  );
}

function Waiting() {
  const me = currentSession()?.profile.member.id;
  const loaded = useLoad(async () => {
    const weekAgo = new Date(Date.now() - 7 * 86_400_000).toISOString().slice(0, 10);
    const batches = can("/api/v1/transaction/transfer/web/approve_bulk_transfer") && can("/api/v1/transaction/transfer/web/fetch_bulk_transfers");
    const [pending, failed, reversed, heldBatches] = await Promise.all([
      call(client.POST("/api/v1/transaction/transfer/web/fetch_pending_transfers", { body: { limit: 100 } })),
      call(client.POST("/api/v1/transaction/transfer/web/fetch_transfers", { body: { filters: { transfer_status: "failed", start_date: weekAgo }, limit: 5 } })),
      call(client.POST("/api/v1/transaction/transfer/web/fetch_transfers", { body: { filters: { transfer_status: "reversed", start_date: weekAgo }, limit: 5 } })),
      batches
        ? call(client.POST("/api/v1/transaction/transfer/web/fetch_bulk_transfers", { body: { status: "pending_approval", limit: 100 } }))
        : null,
    ]);
    return { pending: pending.data, failed: [...failed.data, ...reversed.data], batches: heldBatches?.data ?? [] };
  }, "waiting");
  const value = loaded.value;
  const forMe = (value?.pending ?? []).filter((transfer) => transfer.initiated_by !== me);
  const batchesForMe = (value?.batches ?? []).filter((batch) => batch.authorised_by !== me).length;
  const toApprove = [
    forMe.length ? `${countText(forMe.length)} payment${forMe.length === 1 ? "" : "s"}` : "",
    batchesForMe ? `${countText(batchesForMe)} bulk payment${batchesForMe === 1 ? "" : "s"}` : "",
  ].filter(Boolean);
  const mine = (value?.pending ?? []).filter((transfer) => transfer.initiated_by === me);
  const approves = can("/api/v1/transaction/transfer/web/approve_transfer");
  return (
    <div class="card" data-testid="waiting">
      <h2>Waiting</h2>
      <ErrorNote error={loaded.error} />
      {value && (
        <ul class="plain">
          {approves && (
            <li data-testid="waiting-for-me">
              <Link to="approvals">
                {toApprove.length ? `${toApprove.join(" and ")} to approve` : "Nothing to approve"}
              </Link>
            </li>
          )}
          {mine.map((transfer) => (
            <li>
              <Link to={`transfers/${encodeURIComponent(transfer.reference_number)}`}>
                Your {naira(transfer.amount)} to {transfer.beneficiary_account_name}
              </Link>{" "}
              <Badge value="pending_approval" />
            </li>
          ))}
          {value.failed.map((transfer) => (
            <li>
              <Link to={`transfers/${encodeURIComponent(transfer.reference_number)}`}>
                {naira(transfer.amount)} to {transfer.beneficiary_account_name}
              </Link>{" "}
              <Badge value={transfer.transfer_status} />
            </li>
          ))}
          {!mine.length && !value.failed.length && !approves && <li class="muted">Nothing waits for you.</li>}
          {!value.failed.length && <li class="muted">No payment failed this week.</li>}
        </ul>
      )}
    </div>
  );
}

function Recent() {
  // Each row names its account as people know it: the business's own by name, a customer's by
  // number (a payment from the main account to a customer's is two rows, one per account).
  const loaded = useLoad(async () => {
    const [rows, own] = await Promise.all([
      call(client.POST("/api/v1/transaction/web/fetch_transactions", { body: { limit: 6 } })),
      can("/api/v1/account/web/fetch_account_summaries") ? ownAccounts() : Promise.resolve([]),
    ]);
    return { rows: rows.data, own };
  }, "recent");
  const accountName = (number: string) => {
    const account = loaded.value?.own.find((candidate) => candidate.account_number === number);
    if (!account) return `Account ${number}`;
    return account.account_class === "primary" ? `${account.account_name} (main)` : account.account_name;
  };
  return (
    <div class="card wide" data-testid="recent">
      <div class="heading">
        <h2>Latest transactions</h2>
        <Link to="transactions">All transactions</Link>
      </div>
      <ErrorNote error={loaded.error} />
      <ul class="plain">
        {(loaded.value?.rows ?? []).map((row) => (
          <li data-reference={row.reference_number}>
            <span>
              {row.narration}
              <span class="muted small block">
                <Link to={`accounts/${row.account_number}`}>{accountName(row.account_number)}</Link> · {when(row.created_at)}
              </span>
            </span>
            <span class={`amount ${row.transaction_type}`}>
              {row.transaction_type === "debit" ? "−" : "+"}
              {naira(row.amount)}
            </span>
          </li>
        ))}
        {loaded.value?.rows.length === 0 && <li class="muted">No transactions yet.</li>}
      </ul>
    </div>
  );
}
