// Logging in, and accepting an invitation from its link.
import { useState } from "preact/hooks";
import { call, client, Refusal } from "../api";
import { navigate } from "../router";
import { logIn } from "../session";
import { ErrorNote, Field, Link, Notice, useAction } from "../ui";

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
        <ErrorNote error={action.error} />
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
          <Field label="Business id" hint="This email and password belong to several businesses: which one?">
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
  const [done, setDone] = useState(false);
  const action = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
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
  return (
    <div class="centered">
      <form noValidate class="card narrow" onSubmit={submit}>
        <h1>Join your team on Kobo</h1>
        {done ? (
          <>
            <Notice kind="success">Your invitation is accepted and your password is set.</Notice>
            <button type="button" onClick={() => navigate("login")}>
              Log in
            </button>
          </>
        ) : !token ? (
          <Notice kind="warning">
            This page needs the link from your invitation email. <Link to="login">Log in</Link> instead?
          </Notice>
        ) : (
          <>
            <p class="muted">Choose the password you will log in with (8 to 128 characters).</p>
            <ErrorNote error={action.error} />
            <Field label="Password">
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
