// The audit log (what members did) and the activity log (calls made with the integration's
// credentials), with their filters and keyset paging.
import { useState } from "preact/hooks";
import { call, client, type Schemas } from "../api";
import { when } from "../money";
import { Badge, chosen, Empty, ErrorNote, Field, Pager, useCursorPages } from "../ui";

type AuditFilters = Schemas["AuditLogFilters"] & { search?: string };
type ActivityFilters = Schemas["ActivityLogFilters"] & { start_date?: string; end_date?: string; search?: string };

const AUDIT_ACTIONS: Schemas["AuditAction"][] = [
  "login", "logout", "change_password", "regenerate_secret", "add_member", "resend_invite", "accept_invite",
  "update_member_role", "deactivate_member", "reactivate_member", "create_role", "update_role", "create_account",
  "create_customer_account", "receive_inbound_transfer", "funds_transfer", "approve_transfer", "reject_transfer",
  "cancel_transfer", "create_approval_policy", "update_approval_policy", "create_webhook_configuration",
  "update_webhook_configuration", "rotate_webhook_secret", "replay_webhook_event", "test_webhook",
];

export function AuditLogPage() {
  const [draft, setDraft] = useState<AuditFilters>({});
  const [filters, setFilters] = useState<AuditFilters>({});
  const { search, ...rest } = chosen(filters);
  const pages = useCursorPages(
    async (cursor) =>
      call(client.POST("/api/v1/security/web/fetch_audit_logs", { body: { filters: rest, ...(search ? { search } : {}), limit: 20, ...cursor } })),
    JSON.stringify(filters),
  );
  const edit = (change: Partial<AuditFilters>) => setDraft({ ...draft, ...change });
  return (
    <section>
      <h1>Audit log</h1>
      <p class="muted">What the team did in the Dashboard, newest first. Entries are never changed.</p>
      <form
        noValidate
        class="filters"
        onSubmit={(event) => {
          event.preventDefault();
          setFilters(draft);
        }}
      >
        <Field label="Action">
          <select name="action" value={draft.action ?? ""} onChange={(e) => edit({ action: (e.currentTarget.value || undefined) as AuditFilters["action"] })}>
            <option value="">Any</option>
            {AUDIT_ACTIONS.map((action) => (
              <option value={action}>{action.replace(/_/g, " ")}</option>
            ))}
          </select>
        </Field>
        <Field label="From">
          <input name="start_date" type="date" value={draft.start_date ?? ""} onInput={(e) => edit({ start_date: e.currentTarget.value })} />
        </Field>
        <Field label="To">
          <input name="end_date" type="date" value={draft.end_date ?? ""} onInput={(e) => edit({ end_date: e.currentTarget.value })} />
        </Field>
        <Field label="Member id">
          <input name="user_id" value={draft.user_id ?? ""} onInput={(e) => edit({ user_id: e.currentTarget.value })} />
        </Field>
        <Field label="Search">
          <input name="search" type="search" placeholder="Action, member or address" value={draft.search ?? ""} onInput={(e) => edit({ search: e.currentTarget.value })} />
        </Field>
        <button type="submit">Filter</button>
      </form>
      <ErrorNote error={pages.error} />
      {pages.items.length === 0 && !pages.loading ? (
        <Empty>No entries match.</Empty>
      ) : (
        <table class="list">
          <thead>
            <tr>
              <th>When</th>
              <th>Action</th>
              <th>Member</th>
              <th>Object</th>
              <th>Address</th>
              <th>HTTP</th>
            </tr>
          </thead>
          <tbody>
            {pages.items.map((entry) => (
              <tr key={entry.id}>
                <td>{when(entry.created_at)}</td>
                <td>{entry.action.replace(/_/g, " ")}</td>
                <td>
                  {entry.user}
                  {entry.user_id && (
                    <button type="button" class="link" title="Only this member's actions" onClick={() => { const next = { ...filters, user_id: entry.user_id ?? undefined }; setDraft(next); setFilters(next); }}>
                      only
                    </button>
                  )}
                </td>
                <td>{entry.target_type ? `${entry.target_type} ${entry.target_id ?? ""}` : "—"}</td>
                <td class="mono">{entry.ip_address}</td>
                <td>
                  <Badge value={entry.response_code < 400 ? "success" : "failed"} /> {entry.response_code}
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

export function ActivityLogPage() {
  const [draft, setDraft] = useState<ActivityFilters>({});
  const [filters, setFilters] = useState<ActivityFilters>({});
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
                <td>{when(entry.created_at)}</td>
                <td class="mono">
                  {entry.method} {entry.endpoint}
                </td>
                <td>
                  <Badge value={entry.status} /> {entry.response_code}
                </td>
                <td>{entry.message}</td>
                <td class="mono">{entry.ip_address}</td>
                <td class="mono small">{entry.request_id}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager pages={pages} label="Activity log" />
    </section>
  );
}
