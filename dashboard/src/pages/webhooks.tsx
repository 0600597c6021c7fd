// Webhooks: the endpoint (registered once, its secret shown once; then changed, paused and
// resumed), the secret's rotation, a test event, and the delivery log with each event's attempts
// and a replay.
import { useState } from "preact/hooks";
import { call, client, newIdempotencyKey, Refusal, type Schemas } from "../api";
import { when } from "../money";
import { can } from "../session";
import { Badge, chosen, Empty, ErrorNote, Field, Notice, Pager, SecretOnce, useAction, useCursorPages, useLoad } from "../ui";

type EventType = Schemas["WebhookEventType"];
type EventFilters = Schemas["WebhookEventFilters"];

const EVENT_TYPES: EventType[] = [
  "account.created", "account.status_changed", "collection.received", "transfer.pending_approval", "transfer.rejected",
  "transfer.success", "transfer.failed", "transfer.reversed", "transfer.cancelled", "transfer.expired", "webhook.test",
];

export function WebhooksPage() {
  const [round, setRound] = useState(0);
  const [secret, setSecret] = useState<{ title: string; value: string; note?: string } | null>(null);
  const configuration = useLoad(async () => {
    try {
      return (await call(client.POST("/api/v1/customer/web/get_webhook_configuration", { body: {} }))).data;
    } catch (error) {
      if (error instanceof Refusal && error.code === "47") return null; // none registered yet
      throw error;
    }
  }, `configuration-${round}`);
  const manage = can("/api/v1/customer/web/rotate_webhook_secret");
  const change = can("/api/v1/customer/web/update_webhook_configuration");
  const current = configuration.value;
  return (
    <section>
      <h1>Webhooks</h1>
      <p class="muted">Kobo POSTs each event to your endpoint, signed the Standard Webhooks way with your secret.</p>
      <ErrorNote error={configuration.error} />
      {secret && (
        <SecretOnce title={secret.title} secret={secret.value} onDone={() => setSecret(null)}>
          {secret.note && <p>{secret.note}</p>}
        </SecretOnce>
      )}
      {current === null && manage && (
        <Register
          onRegistered={(created) => {
            setSecret({ title: "Your endpoint's signing secret", value: created.secret });
            setRound((n) => n + 1);
          }}
        />
      )}
      {current === null && !manage && <Notice>No webhook endpoint is registered.</Notice>}
      {current && (
        <Endpoint
          configuration={current}
          manage={manage}
          change={change}
          onChanged={() => setRound((n) => n + 1)}
          onRotated={(rotated) =>
            setSecret({
              title: "The new signing secret",
              value: rotated.secret,
              note: `Until ${when(rotated.previous_secret_expires_at)} deliveries carry both signatures, so you can deploy the new secret without missing events.`,
            })
          }
        />
      )}
      {can("/api/v1/customer/web/fetch_webhook_events") && <Deliveries manage={manage && Boolean(current)} refresh={round} />}
    </section>
  );
}

/** What a person sets of an endpoint: its URL, the addresses it may resolve to, its events. */
interface Destination {
  url: string;
  /** As typed: addresses and ranges separated by commas or spaces. */
  whitelist: string;
  types: Set<EventType>;
}

/** An event kind the spec names. The answers' kinds are open (a later release may add one); the
 * Dashboard is built with the server it is served by, so it knows every kind that server sends. */
function isEventType(type: string): type is EventType {
  return (EVENT_TYPES as readonly string[]).includes(type);
}

function destinationOf(configuration: Schemas["WebhookConfiguration"]): Destination {
  return { url: configuration.url, whitelist: configuration.ip_whitelist.join(", "), types: new Set(configuration.event_types.filter(isEventType)) };
}

function bodyOf(destination: Destination) {
  return {
    url: destination.url.trim(),
    ip_whitelist: destination.whitelist.split(/[\s,]+/).filter(Boolean),
    event_types: EVENT_TYPES.filter((type) => destination.types.has(type)),
  };
}

function DestinationFields({ value, onChange }: { value: Destination; onChange: (value: Destination) => void }) {
  return (
    <>
      <Field label="URL" hint="https:// in production; the sandbox also takes http://">
        <input name="url" type="url" placeholder="https://example.com/webhooks/kobo" value={value.url} onInput={(e) => onChange({ ...value, url: e.currentTarget.value })} />
      </Field>
      <Field label="Allowed addresses" hint="Optional: IP addresses or ranges the endpoint's host may resolve to, separated by commas">
        <input name="ip_whitelist" value={value.whitelist} onInput={(e) => onChange({ ...value, whitelist: e.currentTarget.value })} />
      </Field>
      <fieldset>
        <legend>Events (none chosen: all)</legend>
        <div class="checks">
          {EVENT_TYPES.map((type) => (
            <label class="check">
              <input
                type="checkbox"
                name="event_types"
                value={type}
                checked={value.types.has(type)}
                onChange={() => {
                  const types = new Set(value.types);
                  if (types.has(type)) types.delete(type);
                  else types.add(type);
                  onChange({ ...value, types });
                }}
              />
              <code>{type}</code>
            </label>
          ))}
        </div>
      </fieldset>
    </>
  );
}

function Register({ onRegistered }: { onRegistered: (created: Schemas["CreatedWebhookConfiguration"]) => void }) {
  const [destination, setDestination] = useState<Destination>({ url: "", whitelist: "", types: new Set() });
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
            client.POST("/api/v1/customer/web/webhook_configuration", {
              body: bodyOf(destination),
              params: { header: { "Idempotency-Key": key } },
            }),
          );
          onRegistered(answer.data);
        });
      }}
    >
      <h2>Register your endpoint</h2>
      <ErrorNote error={action.error} />
      <DestinationFields value={destination} onChange={setDestination} />
      <button type="submit" disabled={action.busy}>
        Register
      </button>
    </form>
  );
}

/** `update_webhook_configuration_web`: the URL, addresses and events, replaced as the form holds them. */
function EditEndpoint({ configuration, onSaved, onCancel }: { configuration: Schemas["WebhookConfiguration"]; onSaved: () => void; onCancel: () => void }) {
  const [destination, setDestination] = useState(() => destinationOf(configuration));
  const action = useAction();
  return (
    <form
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        void action.run(async () => {
          await call(client.POST("/api/v1/customer/web/update_webhook_configuration", { body: bodyOf(destination) }));
          onSaved();
        });
      }}
    >
      <h3>Change the endpoint</h3>
      <ErrorNote error={action.error} />
      <DestinationFields value={destination} onChange={setDestination} />
      <div class="actions">
        <button type="submit" disabled={action.busy}>
          Save the endpoint
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function Endpoint({
  configuration,
  manage,
  change,
  onChanged,
  onRotated,
}: {
  configuration: Schemas["WebhookConfiguration"];
  manage: boolean;
  change: boolean;
  onChanged: () => void;
  onRotated: (rotated: Schemas["RotatedWebhookSecret"]) => void;
}) {
  const [rotationKey, setRotationKey] = useState(newIdempotencyKey);
  const [confirmRotation, setConfirmRotation] = useState(false);
  const [editing, setEditing] = useState(false);
  const [tested, setTested] = useState(false);
  const action = useAction();
  const active = configuration.is_active;
  return (
    <div class="card" data-testid="endpoint">
      <div class="heading">
        <h2 class="mono">{configuration.url}</h2>
        <span data-testid="endpoint-status">
          <Badge value={active ? "active" : "paused"} />
        </span>
      </div>
      <dl class="details">
        <dt>Events</dt>
        <dd data-testid="endpoint-events">{configuration.event_types.length ? configuration.event_types.join(", ") : "all"}</dd>
        <dt>Allowed addresses</dt>
        <dd data-testid="endpoint-addresses">{configuration.ip_whitelist.length ? configuration.ip_whitelist.join(", ") : "any public address"}</dd>
        <dt>Registered</dt>
        <dd>{when(configuration.created_at)}</dd>
        <dt>Changed</dt>
        <dd>{when(configuration.updated_at)}</dd>
      </dl>
      {!active && (
        <Notice kind="warning">
          Deliveries are paused: events that happen meanwhile are recorded as skipped, and can be replayed from the delivery
          log once deliveries resume.
        </Notice>
      )}
      <ErrorNote error={action.error} />
      {tested && <Notice kind="success">A test event is on its way: see the delivery log below.</Notice>}
      {change && editing && (
        <EditEndpoint
          configuration={configuration}
          onCancel={() => setEditing(false)}
          onSaved={() => {
            setEditing(false);
            onChanged();
          }}
        />
      )}
      {(manage || change) && !editing && (
        <div class="actions">
          {change && (
            <button
              type="button"
              class="secondary"
              disabled={action.busy}
              onClick={() =>
                void action.run(async () => {
                  await call(client.POST("/api/v1/customer/web/update_webhook_configuration", { body: { is_active: !active } }));
                  setTested(false);
                  onChanged();
                })
              }
            >
              {active ? "Pause deliveries" : "Resume deliveries"}
            </button>
          )}
          {change && (
            <button type="button" class="secondary" onClick={() => setEditing(true)}>
              Change the endpoint
            </button>
          )}
          {manage && (
            <button
              type="button"
              class="secondary"
              disabled={action.busy || !active}
              title={active ? undefined : "Resume deliveries to send a test event"}
              onClick={() =>
                void action.run(async () => {
                  await call(client.POST("/api/v1/customer/web/test_webhook", { body: {} }));
                  setTested(true);
                })
              }
            >
              Send a test event
            </button>
          )}
          {manage &&
            (confirmRotation ? (
              <>
                <span>A new secret signs from now on; the old one also signs for 24 hours.</span>
                <button
                  type="button"
                  class="danger"
                  disabled={action.busy}
                  onClick={() =>
                    void action.run(async () => {
                      const answer = await call(
                        client.POST("/api/v1/customer/web/rotate_webhook_secret", {
                          body: {},
                          params: { header: { "Idempotency-Key": rotationKey } },
                        }),
                      );
                      setConfirmRotation(false);
                      setRotationKey(newIdempotencyKey());
                      onRotated(answer.data);
                    })
                  }
                >
                  Rotate now
                </button>
                <button type="button" class="secondary" onClick={() => setConfirmRotation(false)}>
                  Keep the secret
                </button>
              </>
            ) : (
              <button type="button" class="secondary" onClick={() => setConfirmRotation(true)}>
                Rotate the secret
              </button>
            ))}
        </div>
      )}
    </div>
  );
}

function Deliveries({ manage, refresh }: { manage: boolean; refresh: number }) {
  const [draft, setDraft] = useState<EventFilters>({});
  const [filters, setFilters] = useState<EventFilters>({});
  const [open, setOpen] = useState<string | null>(null);
  const applied = chosen(filters);
  const pages = useCursorPages(
    async (cursor) => call(client.POST("/api/v1/customer/web/fetch_webhook_events", { body: { filters: applied, limit: 20, ...cursor } })),
    `${JSON.stringify(applied)}|${refresh}`,
  );
  const edit = (change: Partial<EventFilters>) => setDraft({ ...draft, ...change });
  return (
    <>
      <div class="heading">
        <h2>Delivery log</h2>
        <button type="button" class="secondary" onClick={pages.reload}>
          Refresh
        </button>
      </div>
      <form
        noValidate
        class="filters"
        onSubmit={(event) => {
          event.preventDefault();
          setFilters(draft);
        }}
      >
        <Field label="Status">
          <select name="status" value={draft.status ?? ""} onChange={(e) => edit({ status: (e.currentTarget.value || undefined) as EventFilters["status"] })}>
            <option value="">Any</option>
            {["pending", "delivered", "failed", "skipped"].map((status) => (
              <option value={status}>{status}</option>
            ))}
          </select>
        </Field>
        <Field label="Event">
          <select name="event_type" value={draft.event_type ?? ""} onChange={(e) => edit({ event_type: (e.currentTarget.value || undefined) as EventType })}>
            <option value="">Any</option>
            {EVENT_TYPES.map((type) => (
              <option value={type}>{type}</option>
            ))}
          </select>
        </Field>
        <Field label="From">
          <input name="start_date" type="date" value={draft.start_date ?? ""} onInput={(e) => edit({ start_date: e.currentTarget.value })} />
        </Field>
        <Field label="To">
          <input name="end_date" type="date" value={draft.end_date ?? ""} onInput={(e) => edit({ end_date: e.currentTarget.value })} />
        </Field>
        <button type="submit">Filter</button>
      </form>
      <ErrorNote error={pages.error} />
      {pages.items.length === 0 && !pages.loading ? (
        <Empty>No events match.</Empty>
      ) : (
        <table class="list">
          <thead>
            <tr>
              <th>Emitted</th>
              <th>Event</th>
              <th>Delivery</th>
              <th>Attempts</th>
              <th>Last answer</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {pages.items.map((event) => (
              <DeliveryRow key={event.id} event={event} manage={manage} open={open === event.id} onToggle={() => setOpen(open === event.id ? null : event.id)} onReplayed={pages.reload} />
            ))}
          </tbody>
        </table>
      )}
      <Pager pages={pages} label="Delivery log" />
    </>
  );
}

function DeliveryRow({ event, manage, open, onToggle, onReplayed }: { event: Schemas["WebhookDelivery"]; manage: boolean; open: boolean; onToggle: () => void; onReplayed: () => void }) {
  const action = useAction();
  return (
    <>
      <tr data-event={event.event_type}>
        <td>{when(event.created_at)}</td>
        <td>
          <code>{event.event_type}</code>
        </td>
        <td>
          <Badge value={event.status} />
          {event.next_attempt_at && event.status === "pending" && <div class="muted small">next {when(event.next_attempt_at)}</div>}
        </td>
        <td>
          {event.attempts} <span class="muted">({event.remaining_attempts} left)</span>
        </td>
        <td>
          {event.last_response_status ?? "—"}
          {event.last_error && <div class="muted small">{event.last_error}</div>}
        </td>
        <td>
          <div class="actions">
            <button type="button" class="link" onClick={onToggle} aria-expanded={open}>
              {open ? "Hide" : "Details"}
            </button>
            {manage && event.status !== "pending" && (
              <button
                type="button"
                class="secondary"
                disabled={action.busy}
                onClick={() =>
                  void action.run(async () => {
                    await call(client.POST("/api/v1/customer/web/replay_webhook_event", { body: { event_id: event.id } }));
                    onReplayed();
                  })
                }
              >
                Replay
              </button>
            )}
          </div>
          <ErrorNote error={action.error} />
        </td>
      </tr>
      {open && (
        <tr class="expanded">
          <td colSpan={6}>
            <div class="grid">
              <div>
                <h3>Payload</h3>
                <pre>{JSON.stringify(event.payload, null, 2)}</pre>
              </div>
              <div>
                <h3>Attempts</h3>
                {event.attempt_log.length === 0 ? (
                  <p class="muted">None yet.</p>
                ) : (
                  <ul class="attempts">
                    {event.attempt_log.map((attempt) => (
                      <li>
                        {when(attempt.attempted_at)}: {attempt.response_status ?? "no answer"} in {attempt.latency_ms} ms
                        {attempt.error && <div class="muted">{attempt.error}</div>}
                        {attempt.response_body && <pre class="small">{attempt.response_body}</pre>}
                      </li>
                    ))}
                  </ul>
                )}
              </div>
            </div>
          </td>
        </tr>
      )}
    </>
  );
}
