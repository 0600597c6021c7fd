// Logging in, and accepting an invitation from its link.
import { useState } from "preact/hooks";
import { call, client, Refusal } from "../api";
import { navigate } from "../router";
import { logIn } from "../session";
import { when } from "../money";
import { ErrorNote, Field, Link, Notice, useAction, useLoad } from "../ui";

export function LoginPage({ reason }: { reason: string | null }) {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [businessId, setBusinessId] = useState("");
  const [needsBusiness, setNeedsBusiness] = useState(false);
  const action = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
    await action.run(async () => {
      try {
        await logIn(email.trim(), password, needsBusiness && businessId.trim() ? businessId.trim() : undefined);
      } catch (error) {
        // One password for several businesses: the API asks which (`01` naming business_id).
        if (error instanceof Refusal && error.code === "01" && error.message.includes("business_id")) {
          setNeedsBusiness(true);
        }
        throw error;
      }
    });
  };
  return (
    <div class="centered">
      <form noValidate class="card narrow" onSubmit={submit}>
        <h1>Kobo Dashboard</h1>
        <p class="muted">Log in with your team member's email and password.</p>
        {reason && <Notice>{reason}</Notice>}
        <ErrorNote error={action.error} context="login" />
        <Field label="Email">
          <input name="email" type="email" autoComplete="username" value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </Field>
        <Field label="Password">
          <input
            name="password"
            type="password"
            autoComplete="current-password"
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </Field>
        {needsBusiness && (
          <Field label="Business" hint="This email and password open several businesses: paste the id of the one you want (Settings shows it to its members).">
            <input name="business_id" value={businessId} onInput={(e) => setBusinessId(e.currentTarget.value)} />
          </Field>
        )}
        <button type="submit" disabled={action.busy}>
          {action.busy ? "Logging in…" : "Log in"}
        </button>
      </form>
    </div>
  );
}

export function AcceptInvitePage({ token }: { token: string }) {
  const [password, setPassword] = useState("");
  const [confirm, setConfirm] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  // The link is read first: what it is for, or why it no longer works, before any password.
  const invitation = useLoad(
    async () => (token ? (await call(client.POST("/api/v1/auth/web/get_invitation", { body: { token } }))).data : null),
    token,
  );
  const action = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
    if (password.length < 8) return setProblem("Password: at least 8 characters.");
    if (password !== confirm) return setProblem("The two passwords are not the same.");
    setProblem(null);
    const ok = await action.run(async () => {
      await call(
        client.POST("/api/v1/auth/web/accept_invite", {
          body: { token, password, confirm_password: confirm },
        }),
      );
    });
    if (ok) {
      setDone(true);
      // The token has done its work: keep it out of the address bar and the history.
      window.history.replaceState(null, "", "/dashboard/accept-invite");
    }
  };
  const open = invitation.value;
  return (
    <div class="centered">
      <form noValidate class="card narrow" onSubmit={submit}>
        {done ? (
          <>
            <h1>Welcome to {open?.business_name ?? "your team"}</h1>
            <Notice kind="success">Your password is set: log in with {open?.email ?? "your email"} and it.</Notice>
            <button type="button" onClick={() => navigate("login")}>
              Log in
            </button>
          </>
        ) : !token ? (
          <>
            <h1>Join your team on Kobo</h1>
            <Notice kind="warning">
              This page needs the link from your invitation email. <Link to="login">Log in</Link> instead?
            </Notice>
          </>
        ) : invitation.loading ? (
          <p class="muted">Reading your invitation…</p>
        ) : !open ? (
          <>
            <h1>This invitation cannot be used</h1>
            <ErrorNote error={invitation.error} context="invitation" />
            <p>
              Already joined? <Link to="login">Log in</Link>.
            </p>
          </>
        ) : (
          <>
            <h1 data-testid="invitation-heading">Join {open.business_name} on Kobo</h1>
            <p data-testid="invitation-role">
              {open.first_name}, you are invited as <strong>{open.role_name}</strong>: {open.role_description}
            </p>
            <p class="muted">You will be able to: {open.permission_names.filter((name) => name !== "Manage own session").join(", ") || "manage your own session"}.</p>
            <p class="muted">
              You will log in as <strong>{open.email}</strong>. This link works until {when(open.expires_at)}.
            </p>
            <ErrorNote error={action.error} context="invitation" />
            {problem && (
              <div class="notice error" role="alert">
                <strong>{problem}</strong>
              </div>
            )}
            <Field label="Password" hint="8 to 128 characters">
              <input
                name="password"
                type="password"
                autoComplete="new-password"
                value={password}
                onInput={(e) => setPassword(e.currentTarget.value)}
              />
            </Field>
            <Field label="Confirm password">
              <input
                name="confirm_password"
                type="password"
                autoComplete="new-password"
                value={confirm}
                onInput={(e) => setConfirm(e.currentTarget.value)}
              />
            </Field>
            <button type="submit" disabled={action.busy}>
              Accept the invitation
            </button>
          </>
        )}
      </form>
    </div>
  );
}
