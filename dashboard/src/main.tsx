// The Dashboard's shell: the session, the navigation (only what the member's role allows) and
// the page of the current route.
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import "./styles.css";
import type { paths } from "./generated/kobo";
import { AccountPage, AccountsPage } from "./pages/accounts";
import { ApprovalsPage } from "./pages/approvals";
import { BulkPage } from "./pages/bulk";
import { ExportsPage } from "./pages/exports";
import { AcceptInvitePage, LoginPage } from "./pages/login";
import { OverviewPage } from "./pages/overview";
import { ActivityLogPage, AuditLogPage } from "./pages/logs";
import { PayPage } from "./pages/pay";
import { SettingsPage } from "./pages/settings";
import { StatementPage } from "./pages/statement";
import { RolesPage, TeamPage } from "./pages/team";
import { SettlementsPage, TransactionsPage } from "./pages/transactions";
import { TransferPage, TransfersPage } from "./pages/transfers";
import { WebhooksPage } from "./pages/webhooks";
import { navigate, useLocation } from "./router";
import { can, logOut, restore, useSessionState } from "./session";
import { Badge, Link, Notice } from "./ui";
import { countText, useWaitingCount } from "./waiting";

interface Section {
  route: string;
  title: string;
  needs: keyof paths;
}

/** The navigation, each entry shown when the role allows the operation its page starts with. */
const SECTIONS: Section[] = [
  { route: "", title: "Overview", needs: "/api/v1/auth/web/get_profile" },
  { route: "accounts", title: "Accounts", needs: "/api/v1/account/web/fetch_account_summaries" },
  { route: "transactions", title: "Transactions", needs: "/api/v1/transaction/web/fetch_transactions" },
  { route: "statement", title: "Statement", needs: "/api/v1/account/web/get_account_statement" },
  { route: "exports", title: "Exports", needs: "/api/v1/export/web/fetch_exports" },
  { route: "settlements", title: "Settlements", needs: "/api/v1/transaction/web/fetch_settlement_transactions" },
  { route: "pay", title: "Pay", needs: "/api/v1/transaction/transfer/web/funds_transfer" },
  { route: "bulk", title: "Bulk payments", needs: "/api/v1/transaction/transfer/web/fetch_bulk_transfers" },
  { route: "transfers", title: "Transfers", needs: "/api/v1/transaction/transfer/web/fetch_transfers" },
  { route: "approvals", title: "Approvals", needs: "/api/v1/transaction/transfer/web/fetch_pending_transfers" },
  { route: "team", title: "Team", needs: "/api/v1/auth/web/fetch_members" },
  { route: "roles", title: "Roles", needs: "/api/v1/auth/web/fetch_roles" },
  { route: "logs/audit", title: "Audit log", needs: "/api/v1/security/web/fetch_audit_logs" },
  { route: "logs/activity", title: "Activity log", needs: "/api/v1/security/web/fetch_activity_logs" },
  { route: "webhooks", title: "Webhooks", needs: "/api/v1/customer/web/get_webhook_configuration" },
  { route: "settings", title: "Settings", needs: "/api/v1/auth/web/change_password" },
];

function Page({ route }: { route: string }) {
  const [first, second] = route.split("/");
  switch (first) {
    case "":
      return SECTIONS.some((section) => section.route && can(section.needs)) ? <OverviewPage /> : <Welcome />;
    case "accounts":
      return second ? <AccountPage accountNumber={second} /> : <AccountsPage />;
    case "transactions":
      return <TransactionsPage />;
    case "statement":
      return <StatementPage />;
    case "exports":
      return <ExportsPage />;
    case "settlements":
      return <SettlementsPage />;
    case "pay":
      return <PayPage step={second ?? ""} />;
    case "bulk":
      return <BulkPage id={second ?? ""} />;
    case "transfers":
      return second ? <TransferPage reference={decodeURIComponent(second)} /> : <TransfersPage />;
    case "approvals":
      return <ApprovalsPage />;
    case "team":
      return <TeamPage />;
    case "roles":
      return <RolesPage />;
    case "logs":
      return second === "activity" ? <ActivityLogPage /> : <AuditLogPage />;
    case "webhooks":
      return <WebhooksPage />;
    case "settings":
      return <SettingsPage />;
    default:
      return (
        <section>
          <h1>Not found</h1>
          <p>
            There is no page here. <Link to="">Go to the overview</Link>.
          </p>
        </section>
      );
  }
}

function Welcome() {
  const first = SECTIONS.find((section) => section.route && can(section.needs));
  return (
    <section>
      <h1>Welcome</h1>
      {first ? (
        <p>
          Start with <Link to={first.route}>{first.title}</Link>.
        </p>
      ) : (
        <p>Your role gives you no pages yet: ask an owner or admin of your business.</p>
      )}
    </section>
  );
}

function App() {
  const { session, ended, restoring } = useSessionState();
  const location = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  const waiting = useWaitingCount(`${location.seq}|${session?.profile.member.id ?? ""}`);
  useEffect(() => {
    void restore();
  }, []);
  // Logged in on the login page's address (after accepting an invitation): go to the start.
  useEffect(() => {
    if (session && location.route === "login") navigate("", { replace: true });
  }, [session, location.route]);
  // A page chosen from the phone's menu closes it.
  useEffect(() => setMenuOpen(false), [location.seq]);
  if (location.route === "accept-invite") return <AcceptInvitePage token={location.query.get("token") ?? ""} />;
  if (restoring) return <p class="loading">Loading…</p>;
  if (!session) return <LoginPage reason={ended} />;
  const { member, role, business } = session.profile;
  const current = location.route.split("/")[0] ?? "";
  return (
    <div class={`shell${menuOpen ? " menu-open" : ""}`}>
      <header class="top">
        <button
          type="button"
          class="menu-button"
          aria-expanded={menuOpen}
          aria-controls="sections"
          aria-label="Menu"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          <span aria-hidden="true">☰</span>
          {waiting ? <span class="count">{countText(waiting)}</span> : null}
        </button>
        <Link to="" class="brand">
          Kobo
        </Link>
        <span class="business">{business.name}</span>
        {business.environment === "sandbox" && <span class="badge sandbox">Sandbox</span>}
        {business.status !== "active" && <Badge value={business.status} />}
        <span class="spacer" />
        <span class="who">
          {member.first_name} {member.last_name} · {role.name}
        </span>
        <button type="button" class="secondary logout" onClick={() => void logOut()}>
          Log out
        </button>
      </header>
      <nav class="side" id="sections" aria-label="Sections">
        <p class="who-menu">
          {member.first_name} {member.last_name} · {role.name}
        </p>
        {SECTIONS.filter((section) => can(section.needs)).map((section) => (
          <Link
            key={section.route}
            to={section.route}
            class={(section.route.split("/")[0] ?? "") === current && (section.route === location.route || !section.route.includes("/")) ? "active" : ""}
          >
            {section.title}
            {section.route === "approvals" && waiting ? (
              <span class="count" data-testid="approvals-count" aria-label={`${waiting} waiting for you`}>
                {countText(waiting)}
              </span>
            ) : null}
          </Link>
        ))}
      </nav>
      <main>
        {business.status !== "active" && (
          <Notice kind="warning">
            {business.name} is not active yet: you can read everything, but opening accounts and sending money wait
            for the bank to activate it.
          </Notice>
        )}
        <Page key={location.seq} route={location.route} />
      </main>
    </div>
  );
}

const root = document.getElementById("app");
if (root) render(<App />, root);
