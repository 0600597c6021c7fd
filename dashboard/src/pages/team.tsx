// The team: members (invite, change role, deactivate or reactivate, resend an invitation) and
// roles with their permissions (custom roles created and edited here).
import { useEffect, useState } from "preact/hooks";
import { call, client, newIdempotencyKey, type Schemas } from "../api";
import { when } from "../money";
import { pick, useFilters } from "../router";
import { can, currentSession, refreshProfile } from "../session";
import { Badge, chosen, Confirmed, Empty, ErrorNote, Field, Notice, useAction, useLoad } from "../ui";

type Member = Schemas["Member"];
type Role = Schemas["Role"];
type MemberFilters = Schemas["MemberFilters"];

function useRoles() {
  return useLoad(async () => (can("/api/v1/auth/web/fetch_roles") ? (await call(client.POST("/api/v1/auth/web/fetch_roles", { body: {} }))).data : []), "roles");
}

/** Roles this member may hand out: none holding a permission they lack (the API refuses those). */
function grantable(roles: Role[]): Role[] {
  const mine = new Set(currentSession()?.profile.role.permission_codes ?? []);
  const owner = currentSession()?.profile.role.name === "Owner";
  return roles.filter((role) => role.permission_codes.every((code) => mine.has(code)) && (owner || role.name !== "Owner"));
}

/** The team's filters and page as the page's address holds them. */
function memberFilters(query: URLSearchParams): MemberFilters & { page?: number } {
  const active = query.get("is_active");
  const page = Number(query.get("page") ?? "");
  return {
    ...pick(query, ["role_id", "start_date", "end_date"]),
    ...(active === "true" || active === "false" ? { is_active: active === "true" } : {}),
    ...(Number.isInteger(page) && page > 1 ? { page } : {}),
  };
}

export function TeamPage() {
  // The filters and the page are in the address: a reload or Back finds the same members.
  const { applied, draft, setDraft, apply } = useFilters(memberFilters);
  const { page: pageNumber, ...filters } = applied;
  const page = pageNumber ?? 1;
  const setPage = (next: number) => apply({ ...filters, page: next > 1 ? next : undefined });
  const [round, setRound] = useState(0);
  const [inviting, setInviting] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const roles = useRoles();
  const catalog = usePermissions().value ?? [];
  const wanted = chosen(filters);
  // fetch_members pages by number only (the spec gives it no cursor): one page after another.
  const members = useLoad(
    async () => call(client.POST("/api/v1/auth/web/fetch_members", { body: { filters: wanted, page, page_size: 20 } })),
    `${JSON.stringify(wanted)}|${page}|${round}`,
  );
  const manage = can("/api/v1/auth/web/update_member");
  const changed = (text: string) => {
    setNotice(text);
    setRound((n) => n + 1);
  };
  const list = members.value?.data ?? [];
  return (
    <section>
      <div class="heading">
        <h1>Team</h1>
        {can("/api/v1/auth/web/add_member") && (
          <button type="button" onClick={() => setInviting(!inviting)}>
            Invite a member
          </button>
        )}
      </div>
      {notice && <Notice kind="success">{notice}</Notice>}
      {inviting && (
        <Invite
          roles={grantable(roles.value ?? [])}
          catalog={catalog}
          onInvited={(email) => {
            setInviting(false);
            changed(`Invitation sent to ${email}. Its link works once and for 72 hours.`);
          }}
        />
      )}
      <form
        noValidate
        class="filters"
        onSubmit={(event) => {
          event.preventDefault();
          const { page: _page, ...next } = draft;
          apply(chosen(next));
        }}
      >
        <Field label="Role">
          <select name="role_id" value={draft.role_id ?? ""} onChange={(e) => setDraft({ ...draft, role_id: e.currentTarget.value || undefined })}>
            <option value="">Any</option>
            {(roles.value ?? []).map((role) => (
              <option value={role.id}>{role.name}</option>
            ))}
          </select>
        </Field>
        <Field label="Active">
          <select
            name="is_active"
            value={draft.is_active === undefined ? "" : String(draft.is_active)}
            onChange={(e) => setDraft({ ...draft, is_active: e.currentTarget.value === "" ? undefined : e.currentTarget.value === "true" })}
          >
            <option value="">Any</option>
            <option value="true">Active</option>
            <option value="false">Not active</option>
          </select>
        </Field>
        <Field label="Joined from">
          <input name="start_date" type="date" value={draft.start_date ?? ""} onInput={(e) => setDraft({ ...draft, start_date: e.currentTarget.value })} />
        </Field>
        <Field label="Joined to">
          <input name="end_date" type="date" value={draft.end_date ?? ""} onInput={(e) => setDraft({ ...draft, end_date: e.currentTarget.value })} />
        </Field>
        <button type="submit">Filter</button>
      </form>
      <ErrorNote error={members.error ?? roles.error} />
      {list.length === 0 && !members.loading ? (
        <Empty>No members match.</Empty>
      ) : (
        <table class="list">
          <thead>
            <tr>
              <th>Member</th>
              <th>Role</th>
              <th>Status</th>
              <th>Last login</th>
              <th>Joined</th>
              {manage && <th />}
            </tr>
          </thead>
          <tbody>
            {list.map((member) => (
              <MemberRow key={member.id} member={member} roles={grantable(roles.value ?? [])} catalog={catalog} manage={manage} onChanged={changed} />
            ))}
          </tbody>
        </table>
      )}
      {(page > 1 || members.value?.pagination?.has_more) && (
        <nav class="pager" aria-label="Team pages">
          <button type="button" class="secondary" disabled={page <= 1} onClick={() => setPage(page - 1)}>
            ← Previous
          </button>
          <span class="muted">Page {page}</span>
          <button type="button" class="secondary" disabled={!members.value?.pagination?.has_more} onClick={() => setPage(page + 1)}>
            Next →
          </button>
        </nav>
      )}
    </section>
  );
}

/** What a role lets a member do, by the catalog's names of its permissions. */
function RoleSummary({ role, catalog }: { role: Role; catalog: Schemas["Permission"][] }) {
  const names = role.permission_codes
    .filter((code) => code !== "self.manage")
    .map((code) => catalog.find((permission) => permission.code === code)?.name ?? code.replace(/[._]/g, " "));
  return (
    <span class="role-summary">
      {role.description} <span class="muted">Can: {names.length ? names.join(", ") : "only their own session"}.</span>
    </span>
  );
}

function usePermissions() {
  return useLoad(
    async () => (can("/api/v1/auth/web/fetch_permissions") ? (await call(client.POST("/api/v1/auth/web/fetch_permissions", { body: {} }))).data : []),
    "permissions",
  );
}

function MemberRow({
  member,
  roles,
  catalog,
  manage,
  onChanged,
}: {
  member: Member;
  roles: Role[];
  catalog: Schemas["Permission"][];
  manage: boolean;
  onChanged: (text: string) => void;
}) {
  const action = useAction();
  const [newRole, setNewRole] = useState<Role | null>(null);
  // The role as changed here, shown from the confirmation until the list is read again (and
  // taken back if the change is refused): the select never shows the old role meanwhile.
  const [changedTo, setChangedTo] = useState<Role | null>(null);
  useEffect(() => setChangedTo(null), [member.user_role_id]);
  const roleId = changedTo?.id ?? member.user_role_id;
  const roleName = changedTo?.name ?? member.role_name;
  const me = currentSession()?.profile.member.id === member.id;
  const name = `${member.first_name} ${member.last_name}`.trim() || member.email;
  const update = (body: Schemas["UpdateMemberRequest"], text: string) =>
    action.run(async () => {
      await call(client.POST("/api/v1/auth/web/update_member", { body }));
      onChanged(text);
    });
  const status = !member.is_active && member.invitation_status === "accepted" ? "deactivated" : member.is_active ? "active" : `invitation_${member.invitation_status}`;
  return (
    <tr data-email={member.email}>
      <td data-label="Member">
        {name}
        {me && <span class="muted"> (you)</span>}
        <div class="muted">{member.email}</div>
      </td>
      <td data-label="Role">
        {manage && !me && roles.some((role) => role.id === roleId) ? (
          <select
            name="role"
            aria-label={`Role of ${member.email}`}
            value={newRole?.id ?? roleId}
            disabled={action.busy}
            onChange={(e) => {
              const role = roles.find((r) => r.id === e.currentTarget.value);
              setNewRole(role && role.id !== roleId ? role : null);
            }}
          >
            {roles.map((role) => (
              <option value={role.id}>{role.name}</option>
            ))}
          </select>
        ) : (
          roleName
        )}
        {newRole && (
          <div class="confirm" role="group" aria-label="Change the role">
            <p>
              Make {name} a <strong>{newRole.name}</strong>? <RoleSummary role={newRole} catalog={catalog} /> It applies from their next click.
            </p>
            <div class="actions">
              <button
                type="button"
                disabled={action.busy}
                onClick={() => {
                  const role = newRole;
                  setNewRole(null);
                  setChangedTo(role);
                  void action.run(async () => {
                    try {
                      await call(client.POST("/api/v1/auth/web/update_member", { body: { member_id: member.id, role_id: role.id } }));
                    } catch (refused) {
                      setChangedTo(null);
                      throw refused;
                    }
                    onChanged(`${name} is now ${role.name}.`);
                  });
                }}
              >
                Change the role
              </button>
              <button type="button" class="secondary" onClick={() => setNewRole(null)}>
                Keep {roleName}
              </button>
            </div>
          </div>
        )}
      </td>
      <td data-label="Status">
        <Badge value={status} />
      </td>
      <td data-label="Last login">{when(member.last_login)}</td>
      <td data-label="Joined">{when(member.date_joined)}</td>
      {manage && (
        <td data-label="">
          <ErrorNote error={action.error} />
          <div class="actions">
            {member.invitation_status !== "accepted" && member.is_active === false && can("/api/v1/auth/web/resend_invite") && (
              <button
                type="button"
                class="secondary"
                disabled={action.busy}
                onClick={() =>
                  void action.run(async () => {
                    await call(client.POST("/api/v1/auth/web/resend_invite", { body: { member_id: member.id } }));
                    onChanged(`A new invitation was sent to ${member.email}; the old link no longer works.`);
                  })
                }
              >
                Resend invitation
              </button>
            )}
            {!me && !member.is_active && member.invitation_status === "pending" && (
              <Confirmed
                label="Revoke invitation"
                question={`Revoke ${name}'s invitation? Its link stops working.`}
                confirm="Revoke"
                danger
                disabled={action.busy}
                onConfirm={() => void update({ member_id: member.id, is_active: false }, `The invitation of ${member.email} is revoked: its link no longer works.`)}
              />
            )}
            {!me && member.is_active && (
              <Confirmed
                label="Deactivate"
                question={`Deactivate ${name}? They are logged out at once and can no longer log in; you can reactivate them later.`}
                confirm={`Deactivate ${member.first_name || "them"}`}
                danger
                disabled={action.busy}
                onConfirm={() => void update({ member_id: member.id, is_active: false }, `${name} is deactivated: they were logged out and can no longer log in.`)}
              />
            )}
            {!me && !member.is_active && member.invitation_status === "accepted" && (
              <Confirmed
                label="Reactivate"
                question={`Let ${name} log in again, as ${roleName}?`}
                confirm="Reactivate"
                disabled={action.busy}
                onConfirm={() => void update({ member_id: member.id, is_active: true }, `${name} can log in again.`)}
              />
            )}
          </div>
        </td>
      )}
    </tr>
  );
}

/**
 * How much a role may do, to list the least powerful first: Owner above every other role, then
 * how many things it may change (every permission not ending `.view`: a Maker moves money, a
 * Viewer reads everything and changes nothing), then how many it may read.
 */
function power(role: Role): [number, number, number] {
  const codes = role.permission_codes.filter((code) => code !== "self.manage");
  const changes = codes.filter((code) => !code.endsWith(".view")).length;
  return [role.name === "Owner" ? 1 : 0, changes, codes.length - changes];
}

function Invite({ roles, catalog, onInvited }: { roles: Role[]; catalog: Schemas["Permission"][]; onInvited: (email: string) => void }) {
  const [form, setForm] = useState({ email: "", first_name: "", last_name: "", role_id: "" });
  const [problem, setProblem] = useState<string | null>(null);
  const [key] = useState(newIdempotencyKey);
  const action = useAction();
  // The least powerful roles first, and none chosen until the person inviting chooses one.
  const ordered = [...roles].sort((a, b) => {
    const [x, y] = [power(a), power(b)];
    return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
  });
  return (
    <form
      noValidate
      class="card"
      data-testid="invite"
      onSubmit={(event) => {
        event.preventDefault();
        if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(form.email.trim())) return setProblem("Email: write the person's email address.");
        if (!form.first_name.trim() || !form.last_name.trim()) return setProblem("Write the person's first and last names.");
        if (!form.role_id) return setProblem("Role: choose what the person may do. Give the least that lets them do their work.");
        setProblem(null);
        void action.run(async () => {
          await call(
            client.POST("/api/v1/auth/web/add_member", {
              body: { email: form.email.trim(), first_name: form.first_name.trim(), last_name: form.last_name.trim(), role_id: form.role_id },
              params: { header: { "Idempotency-Key": key } },
            }),
          );
          onInvited(form.email.trim());
        });
      }}
    >
      <h2>Invite a member</h2>
      <p class="muted">They get an email with a link: it shows them your business and their role, then they choose a password.</p>
      <ErrorNote error={action.error} />
      {problem && (
        <div class="notice error" role="alert">
          <strong>{problem}</strong>
        </div>
      )}
      <div class="grid">
        <Field label="Email">
          <input name="email" type="email" value={form.email} onInput={(e) => setForm({ ...form, email: e.currentTarget.value })} />
        </Field>
        <Field label="First name">
          <input name="first_name" value={form.first_name} onInput={(e) => setForm({ ...form, first_name: e.currentTarget.value })} />
        </Field>
        <Field label="Last name">
          <input name="last_name" value={form.last_name} onInput={(e) => setForm({ ...form, last_name: e.currentTarget.value })} />
        </Field>
      </div>
      <fieldset class="roles">
        <legend>Role</legend>
        {ordered.map((role) => (
          <label class="role-choice">
            <input type="radio" name="role_id" value={role.id} checked={form.role_id === role.id} onChange={() => setForm({ ...form, role_id: role.id })} />
            <span>
              <strong>{role.name}</strong> <RoleSummary role={role} catalog={catalog} />
            </span>
          </label>
        ))}
      </fieldset>
      <button type="submit" disabled={action.busy}>
        Send the invitation
      </button>
    </form>
  );
}

export function RolesPage() {
  const roles = useRoles();
  const permissions = useLoad(async () => (await call(client.POST("/api/v1/auth/web/fetch_permissions", { body: {} }))).data, "permissions");
  const [editing, setEditing] = useState<Role | "new" | null>(null);
  const manage = can("/api/v1/auth/web/create_role");
  const myRole = currentSession()?.profile.role.id;
  const catalog = permissions.value ?? [];
  return (
    <section>
      <div class="heading">
        <h1>Roles</h1>
        {manage && (
          <button type="button" onClick={() => setEditing(editing === "new" ? null : "new")}>
            New role
          </button>
        )}
      </div>
      <p class="muted">A role is a named set of permissions. Built-in roles cannot be edited; every role may manage its own session.</p>
      <ErrorNote error={roles.error ?? permissions.error} />
      {editing && (
        <RoleForm
          role={editing === "new" ? null : editing}
          catalog={catalog}
          onSaved={() => {
            setEditing(null);
            roles.reload();
            void refreshProfile();
          }}
        />
      )}
      {(roles.value ?? []).length === 0 && !roles.loading ? (
        <Empty>No roles.</Empty>
      ) : (
        <table class="list">
          <thead>
            <tr>
              <th>Role</th>
              <th>Permissions</th>
              {manage && <th />}
            </tr>
          </thead>
          <tbody>
            {(roles.value ?? []).map((role) => (
              <tr key={role.id}>
                <td data-label="Role">
                  <strong>{role.name}</strong> {role.is_built_in && <span class="badge">built in</span>}
                  <div class="muted">{role.description}</div>
                </td>
                <td data-label="Permissions">
                  {role.permission_codes.map((code) => (
                    <span class="chip" title={catalog.find((p) => p.code === code)?.description}>
                      {catalog.find((p) => p.code === code)?.name ?? code}
                    </span>
                  ))}
                </td>
                {manage && (
                  <td data-label="">
                    {!role.is_built_in && role.id !== myRole && (
                      <button type="button" class="secondary" onClick={() => setEditing(role)}>
                        Edit
                      </button>
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function RoleForm({ role, catalog, onSaved }: { role: Role | null; catalog: Schemas["Permission"][]; onSaved: () => void }) {
  const [name, setName] = useState(role?.name ?? "");
  const [description, setDescription] = useState(role?.description ?? "");
  const [codes, setCodes] = useState<Set<string>>(new Set(role?.permission_codes ?? ["self.manage"]));
  const [key] = useState(newIdempotencyKey);
  const action = useAction();
  const mine = new Set(currentSession()?.profile.role.permission_codes ?? []);
  const toggle = (code: string) => {
    const next = new Set(codes);
    if (next.has(code)) next.delete(code);
    else next.add(code);
    setCodes(next);
  };
  return (
    <form
      noValidate
      class="card"
      onSubmit={(event) => {
        event.preventDefault();
        void action.run(async () => {
          const permission_codes = [...codes];
          if (role) {
            await call(client.POST("/api/v1/auth/web/update_role", { body: { role_id: role.id, name: name.trim(), description, permission_codes } }));
          } else {
            await call(
              client.POST("/api/v1/auth/web/create_role", {
                body: { name: name.trim(), description, permission_codes },
                params: { header: { "Idempotency-Key": key } },
              }),
            );
          }
          onSaved();
        });
      }}
    >
      <h2>{role ? `Edit ${role.name}` : "New role"}</h2>
      <ErrorNote error={action.error} />
      <div class="grid">
        <Field label="Name">
          <input name="name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <Field label="Description">
          <input name="description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </Field>
      </div>
      <fieldset>
        <legend>Permissions (only those you hold can be given)</legend>
        <div class="checks">
          {catalog.map((permission) => (
            <label class="check" title={permission.description}>
              <input
                type="checkbox"
                checked={codes.has(permission.code) || permission.code === "self.manage"}
                disabled={!mine.has(permission.code) || permission.code === "self.manage"}
                onChange={() => toggle(permission.code)}
              />
              {permission.name} <span class="muted small">{permission.description}</span>
            </label>
          ))}
        </div>
      </fieldset>
      <button type="submit" disabled={action.busy}>
        {role ? "Save the role" : "Create the role"}
      </button>
    </form>
  );
}
