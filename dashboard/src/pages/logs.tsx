// The audit log (what members did) and the activity log (calls made with the integration's
// credentials), with their filters and keyset paging.
import { useState } from "preact/hooks";
import { call, client, type Schemas } from "../api";
import { when } from "../money";
import { navigate, pick, queryValues, useFilters, useLocation, withQuery } from "../router";
import { can } from "../session";
import { Badge, chosen, Empty, ErrorNote, Field, Link, Pager, useCursorPages, useLoad } from "../ui";

type AuditFilters = Schemas["AuditLogFilters"] & { search?: string };
type ActivityFilters = Schemas["ActivityLogFilters"] & { start_date?: string; end_date?: string; search?: string };

const AUDIT_ACTIONS: Schemas["AuditAction"][] = [
  "login", "logout", "change_password", "regenerate_secret", "add_member", "resend_invite", "accept_invite",
  "update_member_role", "deactivate_member", "reactivate_member", "create_role", "update_role", "create_account",
  "create_customer_account", "receive_inbound_transfer", "funds_transfer", "approve_transfer", "reject_transfer",
  "cancel_transfer", "create_approval_policy", "update_approval_policy", "create_webhook_configuration",
  "update_webhook_configuration", "rotate_webhook_secret", "replay_webhook_event", "test_webhook",
  "create_beneficiary", "delete_beneficiary", "create_bulk_transfer", "cancel_bulk_transfer",
  "authorize_bulk_transfer", "approve_bulk_transfer", "reject_bulk_transfer",
];

/** The audit log's actions as a person says them. */
const ACTION_WORDS: Record<string, string> = {
  login: "Logged in",
  logout: "Logged out",
  change_password: "Changed their password",
  regenerate_secret: "Issued a new integration secret",
  add_member: "Invited a member",
  resend_invite: "Sent an invitation again",
  accept_invite: "Accepted an invitation",
  update_member_role: "Changed a member's role",
  deactivate_member: "Deactivated a member",
  reactivate_member: "Reactivated a member",
  create_role: "Created a role",
  update_role: "Changed a role",
  create_account: "Opened a current account",
  create_customer_account: "Opened a customer account",
  receive_inbound_transfer: "Received money (sandbox)",
  funds_transfer: "Made a payment",
  approve_transfer: "Approved a payment",
  reject_transfer: "Rejected a payment",
  cancel_transfer: "Withdrew a payment",
  create_approval_policy: "Turned on approvals",
  update_approval_policy: "Changed the approval policy",
  create_webhook_configuration: "Registered the webhook endpoint",
  update_webhook_configuration: "Changed the webhook endpoint",
  rotate_webhook_secret: "Rotated the webhook secret",
  replay_webhook_event: "Sent a webhook event again",
  test_webhook: "Sent a test webhook",
  create_beneficiary: "Saved a beneficiary",
  delete_beneficiary: "Forgot a saved beneficiary",
  create_bulk_transfer: "Sent a bulk payment to be checked",
  cancel_bulk_transfer: "Cancelled a bulk payment",
  authorize_bulk_transfer: "Authorised a bulk payment",
  approve_bulk_transfer: "Approved a bulk payment",
  reject_bulk_transfer: "Rejected a bulk payment",
};

function actionWords(action: string): string {
  return ACTION_WORDS[action] ?? action.replace(/_/g, " ");
}

/** What an entry acted on, by the name people know (a payment by its reference, a member by name). */
function Target({ entry }: { entry: Schemas["AuditLogEntry"] }) {
  const name = entry.target_name;
  switch (entry.target_type) {
    case "transfer":
      return name ? (
        <Link to={`transfers/${encodeURIComponent(name)}`}>
          Payment <span class="mono">{name}</span>
        </Link>
      ) : (
        <span class="muted">A payment</span>
      );
    case "account":
      return name ? (
        <Link to={`accounts/${name}`}>
          Account <span class="mono">{name}</span>
        </Link>
      ) : (
        <span class="muted">An account</span>
      );
    case "member":
      return <span>{name ? `Member ${name}` : "A member"}</span>;
    case "role":
      return <span>{name ? `Role ${name}` : "A role"}</span>;
    case "webhook_configuration":
      return <span>{name ? `Endpoint ${name}` : "The webhook endpoint"}</span>;
    case "approval_policy":
      return <span>The approval policy</span>;
    case "webhook_event":
      return <span>A webhook event</span>;
    case "transaction":
      return <span>A transaction</span>;
    case "beneficiary":
      return <span>A saved beneficiary</span>;
    case "bulk_transfer":
      return entry.target_id ? <Link to={`bulk/${entry.target_id}`}>A bulk payment</Link> : <span>A bulk payment</span>;
    default:
      return <span class="muted">—</span>;
  }
}

/** The team, for the member filter (by name, not by id); empty without `member.view`. */
function useTeam() {
  return useLoad(async () => {
    if (!can("/api/v1/auth/web/fetch_members")) return [];
    const answer = await call(client.POST("/api/v1/auth/web/fetch_members", { body: { page: 1, page_size: 100, sort_by: "first_name", sort_order: "asc" } }));
    return answer.data;
  }, "team");
}

export function AuditLogPage() {
  const { query } = useLocation();
  const filters = queryValues(query) as AuditFilters;
  const [draft, setDraft] = useState<AuditFilters>(filters);
  const team = useTeam();
  const { search, ...rest } = chosen({ action: filters.action, start_date: filters.start_date, end_date: filters.end_date, user_id: filters.user_id, search: filters.search });
  const pages = useCursorPages(
    async (cursor) =>
      call(client.POST("/api/v1/security/web/fetch_audit_logs", { body: { filters: rest, ...(search ? { search } : {}), limit: 20, ...cursor } })),
    JSON.stringify(filters),
  );
  const edit = (change: Partial<AuditFilters>) => setDraft({ ...draft, ...change });
  const members = team.value ?? [];
  const only = (userId: string) => navigate(withQuery("logs/audit", { ...filters, user_id: userId }));
  return (
    <section>
      <h1>Audit log</h1>
      <p class="muted">What the team did in the Dashboard, newest first. Entries are never changed.</p>
      <form
        noValidate
        class="filters"
        onSubmit={(event) => {
          event.preventDefault();
          navigate(withQuery("logs/audit", { ...draft }));
        }}
      >
        <Field label="Action">
          <select name="action" value={draft.action ?? ""} onChange={(e) => edit({ action: (e.currentTarget.value || undefined) as AuditFilters["action"] })}>
            <option value="">Any</option>
            {AUDIT_ACTIONS.map((action) => (
              <option value={action}>{actionWords(action)}</option>
            ))}
          </select>
        </Field>
        <Field label="From date">
          <input name="start_date" type="date" value={draft.start_date ?? ""} onInput={(e) => edit({ start_date: e.currentTarget.value })} />
        </Field>
        <Field label="To date">
          <input name="end_date" type="date" value={draft.end_date ?? ""} onInput={(e) => edit({ end_date: e.currentTarget.value })} />
        </Field>
        {members.length > 0 && (
          <Field label="Member">
            <select name="user_id" value={draft.user_id ?? ""} onChange={(e) => edit({ user_id: e.currentTarget.value || undefined })}>
              <option value="">Anyone</option>
              {members.map((member) => (
                <option value={member.id}>
                  {member.first_name} {member.last_name}
                </option>
              ))}
            </select>
          </Field>
        )}
        <Field label="Search">
          <input name="search" type="search" placeholder="A name, an email or an address" value={draft.search ?? ""} onInput={(e) => edit({ search: e.currentTarget.value })} />
        </Field>
        <button type="submit">Filter</button>
      </form>
      <ErrorNote error={pages.error ?? team.error} />
      {pages.items.length === 0 && !pages.loading ? (
        <Empty>No entries match.</Empty>
      ) : (
        <table class="list">
          <thead>
            <tr>
              <th>When</th>
              <th>Who</th>
              <th>What</th>
              <th>On</th>
              <th>From</th>
            </tr>
          </thead>
          <tbody>
            {pages.items.map((entry) => (
              <tr key={entry.id} data-action={entry.action}>
                <td data-label="When">{when(entry.created_at)}</td>
                <td data-label="Who">
                  {entry.user}
                  {entry.user_id && entry.user_id !== filters.user_id && (
                    <button type="button" class="link" title="Only what this member did" onClick={() => only(entry.user_id ?? "")}>
                      only theirs
                    </button>
                  )}
                </td>
                <td data-label="What">
                  {actionWords(entry.action)}
                  {entry.response_code >= 400 && <Badge value="failed" text="refused" />}
                </td>
                <td data-label="On" data-testid="audit-target">
                  <Target entry={entry} />
                </td>
                <td data-label="From" class="mono small">
                  {entry.ip_address}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager pages={pages} label="Audit log" />
    </section>
  );
}

const ACTIVITY_FILTERS = ["status", "endpoint", "method", "start_date", "end_date", "search"] as const;

/** The activity log's filters as its address holds them. */
function activityFilters(query: URLSearchParams): ActivityFilters {
  const code = Number(query.get("response_code") ?? "");
  return { ...pick(query, ACTIVITY_FILTERS), ...(Number.isInteger(code) && code > 0 ? { response_code: code } : {}) } as ActivityFilters;
}

export function ActivityLogPage() {
  const { applied: filters, draft, setDraft, apply: setFilters } = useFilters(activityFilters);
  const { start_date, end_date, search, ...rest } = chosen(filters);
  const pages = useCursorPages(
    async (cursor) =>
      call(
        client.POST("/api/v1/security/web/fetch_activity_logs", {
          body: chosen({ filters: rest, start_date, end_date, search, limit: 20, ...cursor }),
        }),
      ),
    JSON.stringify(filters),
  );
  const edit = (change: Partial<ActivityFilters>) => setDraft({ ...draft, ...change });
  return (
    <section>
      <h1>Activity log</h1>
      <p class="muted">Every call made with your integration's credentials, newest first.</p>
      <form
        noValidate
        class="filters"
        onSubmit={(event) => {
          event.preventDefault();
          setFilters(draft);
        }}
      >
        <Field label="Outcome">
          <select name="status" value={draft.status ?? ""} onChange={(e) => edit({ status: (e.currentTarget.value || undefined) as ActivityFilters["status"] })}>
            <option value="">Any</option>
            <option value="success">Success</option>
            <option value="error">Error</option>
          </select>
        </Field>
        <Field label="Path">
          <input name="endpoint" placeholder="/api/v1/..." value={draft.endpoint ?? ""} onInput={(e) => edit({ endpoint: e.currentTarget.value })} />
        </Field>
        <Field label="Method">
          <input name="method" placeholder="POST" value={draft.method ?? ""} onInput={(e) => edit({ method: e.currentTarget.value })} />
        </Field>
        <Field label="HTTP status">
          <input
            name="response_code"
            inputMode="numeric"
            value={draft.response_code ?? ""}
            onInput={(e) => edit({ response_code: e.currentTarget.value === "" ? undefined : Number(e.currentTarget.value) })}
          />
        </Field>
        <Field label="From">
          <input name="start_date" type="date" value={draft.start_date ?? ""} onInput={(e) => edit({ start_date: e.currentTarget.value })} />
        </Field>
        <Field label="To">
          <input name="end_date" type="date" value={draft.end_date ?? ""} onInput={(e) => edit({ end_date: e.currentTarget.value })} />
        </Field>
        <Field label="Search">
          <input name="search" type="search" value={draft.search ?? ""} onInput={(e) => edit({ search: e.currentTarget.value })} />
        </Field>
        <button type="submit">Filter</button>
      </form>
      <ErrorNote error={pages.error} />
      {pages.items.length === 0 && !pages.loading ? (
        <Empty>No calls match.</Empty>
      ) : (
        <table class="list">
          <thead>
            <tr>
              <th>When</th>
              <th>Call</th>
              <th>Outcome</th>
              <th>Message</th>
              <th>Address</th>
              <th>Request id</th>
            </tr>
          </thead>
          <tbody>
            {pages.items.map((entry) => (
              <tr key={entry.id}>
                <td data-label="When">{when(entry.created_at)}</td>
                <td data-label="Call" class="mono">
                  {entry.method} {entry.endpoint}
                </td>
                <td data-label="Outcome">
                  <Badge value={entry.status} /> {entry.response_code}
                </td>
                <td data-label="Message">{entry.message}</td>
                <td data-label="From" class="mono">
                  {entry.ip_address}
                </td>
                <td data-label="Request" class="mono small">
                  {entry.request_id}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager pages={pages} label="Activity log" />
    </section>
  );
}
