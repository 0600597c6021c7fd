// The member's own settings: profile, password, and (with credential.manage) the integration's
// client secret.
import { useState } from "preact/hooks";
import { call, client, type Schemas } from "../api";
import { when } from "../money";
import { can, currentSession, end } from "../session";
import { ErrorNote, Field, SecretOnce, useAction } from "../ui";

export function SettingsPage() {
  const session = currentSession();
  if (!session) return null;
  const { member, role, business } = session.profile;
  return (
    <section>
      <h1>Settings</h1>
      <div class="card">
        <h2>You</h2>
        <dl class="details">
          <dt>Name</dt>
          <dd>
            {member.first_name} {member.last_name}
          </dd>
          <dt>Email</dt>
          <dd>{member.email}</dd>
          <dt>Role</dt>
          <dd>
            {role.name}: {role.permission_codes.join(", ")}
          </dd>
          <dt>Business</dt>
          <dd>
            {business.name} ({business.environment}, {business.status})
          </dd>
          <dt>Last login</dt>
          <dd>{when(member.last_login)}</dd>
        </dl>
      </div>
      <ChangePassword />
      {can("/api/v1/auth/web/regenerate_secret") && <RegenerateSecret usable={business.credentials_usable} />}
    </section>
  );
}

function ChangePassword() {
  const [form, setForm] = useState({ old_password: "", new_password: "", confirm_password: "" });
  const action = useAction();
  return (
    <form
      noValidate
      class="card"
      onSubmit={(event) => {
        event.preventDefault();
        void action.run(async () => {
          await call(client.POST("/api/v1/auth/web/change_password", { body: form }));
          // Every session of the member ends with the change, this one too.
          end("Your password is changed: log in with the new one.");
        });
      }}
    >
      <h2>Change your password</h2>
      <p class="muted">Every session you have open ends, this one too.</p>
      <ErrorNote error={action.error} />
      <div class="grid">
        <Field label="Current password">
          <input name="old_password" type="password" autoComplete="current-password" value={form.old_password} onInput={(e) => setForm({ ...form, old_password: e.currentTarget.value })} />
        </Field>
        <Field label="New password" hint="8 to 128 characters">
          <input name="new_password" type="password" autoComplete="new-password" value={form.new_password} onInput={(e) => setForm({ ...form, new_password: e.currentTarget.value })} />
        </Field>
        <Field label="Confirm the new password">
          <input name="confirm_password" type="password" autoComplete="new-password" value={form.confirm_password} onInput={(e) => setForm({ ...form, confirm_password: e.currentTarget.value })} />
        </Field>
      </div>
      <button type="submit" disabled={action.busy}>
        Change the password
      </button>
    </form>
  );
}

function RegenerateSecret({ usable }: { usable: boolean }) {
  const [working, setWorking] = useState(usable);
  const [confirming, setConfirming] = useState(false);
  const [credentials, setCredentials] = useState<Schemas["IntegrationCredentials"] | null>(null);
  const action = useAction();
  return (
    <div class="card">
      <h2>Integration credentials</h2>
      <p class="muted">
        A new client secret replaces the old one at once: the integration's tokens stop working until it uses the new
        secret. You become the credentials' holder (a transfer made with them counts as yours for approvals).
      </p>
      {!working && (
        <div class="notice error" role="alert">
          The integration's credentials no longer work: the member who issued them has left or may no longer manage
          credentials. The integration's calls are refused until you regenerate the client secret.
        </div>
      )}
      <ErrorNote error={action.error} />
      {credentials && (
        <SecretOnce title={`client_secret of ${credentials.client_id}`} secret={credentials.client_secret} onDone={() => setCredentials(null)} />
      )}
      {confirming ? (
        <div class="actions">
          <button
            type="button"
            class="danger"
            disabled={action.busy}
            onClick={() =>
              void action.run(async () => {
                const answer = await call(client.POST("/api/v1/auth/web/regenerate_secret", { body: {} }));
                setCredentials(answer.data);
                setWorking(true);
                setConfirming(false);
              })
            }
          >
            Regenerate now
          </button>
          <button type="button" class="secondary" onClick={() => setConfirming(false)}>
            Keep the current secret
          </button>
        </div>
      ) : (
        <button type="button" class="secondary" onClick={() => setConfirming(true)}>
          Regenerate the client secret
        </button>
      )}
    </div>
  );
}
