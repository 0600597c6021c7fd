// Choosing an account the way a business has them: its own accounts (the main account first,
// then its current accounts) apart from its customers' accounts, which may be thousands and are
// found by typing a part of a name or a number (`fetch_account_summaries`' `search`, on the
// server). Nothing is limited to the newest hundred accounts.
import { useEffect, useRef, useState } from "preact/hooks";
import { call, client, type Schemas } from "./api";
import { naira } from "./money";

export type Account = Schemas["AccountSummary"] | Schemas["AccountDetail"];

/** What the picker shows of an account. */
export function accountText(account: Account): string {
  return `${account.account_name} · ${account.account_number} · ${naira(account.balance)}`;
}

function kind(account: Account): string {
  if (account.account_class === "primary") return "Main account";
  return account.account_type === "virtual" ? "Customer account" : "Current account";
}

/**
 * The business's own accounts (pool and current), the main one first; active ones only unless
 * `all` (the Accounts page lists the others too). One page holds them all: a business has one
 * main account and at most 20 current accounts (`create_account` refuses more with `83`); its
 * customers' accounts, which may be thousands, are searched apart.
 */
export async function ownAccounts(all = false): Promise<Schemas["AccountSummary"][]> {
  const answer = await call(
    client.POST("/api/v1/account/web/fetch_account_summaries", { body: { account_type: "normal", ...(all ? {} : { is_available: true }), limit: 100 } }),
  );
  return [...answer.data].sort((a, b) => Number(b.account_class === "primary") - Number(a.account_class === "primary"));
}

async function customerAccounts(search: string): Promise<Schemas["AccountSummary"][]> {
  const answer = await call(
    client.POST("/api/v1/account/web/fetch_account_summaries", {
      body: { account_type: "virtual", is_available: true, search, limit: 20 },
    }),
  );
  return answer.data;
}

let pickers = 0;

/**
 * A labelled combobox: closed, it shows the chosen account; focused, it searches. `own` are the
 * business's own accounts (loaded by the page, which also picks the default).
 */
export function AccountPicker({
  label,
  own,
  value,
  onChange,
  exclude,
}: {
  label: string;
  own: Account[];
  value: Account | null;
  onChange: (account: Account) => void;
  exclude?: string;
}) {
  const [id] = useState(() => `picker-${(pickers += 1)}`);
  const [open, setOpen] = useState(false);
  const [query, setQuery] = useState("");
  const [found, setFound] = useState<Account[] | null>(null);
  const [searching, setSearching] = useState(false);
  const [active, setActive] = useState(0);
  const input = useRef<HTMLInputElement>(null);

  // The customers' accounts matching what was typed, a quarter second after the last key.
  useEffect(() => {
    const text = query.trim();
    if (text.length < 2) {
      setFound(null);
      return;
    }
    let current = true;
    setSearching(true);
    const timer = setTimeout(() => {
      customerAccounts(text).then(
        (accounts) => {
          if (!current) return;
          setFound(accounts);
          setSearching(false);
        },
        () => {
          if (!current) return;
          setFound([]);
          setSearching(false);
        },
      );
    }, 250);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [query]);

  const needle = query.trim().toLowerCase();
  const ownShown = own.filter(
    (account) =>
      account.account_number !== exclude &&
      (!needle || account.account_name.toLowerCase().includes(needle) || account.account_number.includes(needle)),
  );
  const customers = (found ?? []).filter((account) => account.account_number !== exclude);
  const options = [...ownShown, ...customers];
  const choose = (account: Account) => {
    onChange(account);
    setOpen(false);
    setQuery("");
    input.current?.blur();
  };
  const option = (account: Account, index: number) => (
    <li
      id={`${id}-${index}`}
      role="option"
      aria-selected={index === active}
      class={index === active ? "active" : ""}
      data-account={account.account_number}
      onMouseDown={(event) => {
        event.preventDefault();
        choose(account);
      }}
    >
      <span class="name">{account.account_name}</span>
      <span class="muted">
        {kind(account)} · <span class="mono">{account.account_number}</span>
      </span>
      <span class="amount">{naira(account.balance)}</span>
    </li>
  );
  return (
    <div class="picker">
      <label class="field" for={id}>
        <span class="label">{label}</span>
        <input
          id={id}
          ref={input}
          role="combobox"
          aria-expanded={open}
          aria-controls={`${id}-list`}
          aria-autocomplete="list"
          aria-activedescendant={open && options.length ? `${id}-${active}` : undefined}
          autoComplete="off"
          placeholder="Type a name or an account number"
          value={open ? query : value ? accountText(value) : ""}
          onFocus={() => {
            setOpen(true);
            setActive(0);
          }}
          onBlur={() => setOpen(false)}
          onInput={(event) => {
            setQuery(event.currentTarget.value);
            setActive(0);
          }}
          onKeyDown={(event) => {
            if (event.key === "ArrowDown") setActive((n) => Math.min(n + 1, Math.max(0, options.length - 1)));
            else if (event.key === "ArrowUp") setActive((n) => Math.max(0, n - 1));
            else if (event.key === "Enter" && open && options[active]) choose(options[active]);
            else if (event.key === "Escape") input.current?.blur();
            else return;
            event.preventDefault();
          }}
        />
      </label>
      {open && (
        <ul id={`${id}-list`} role="listbox" aria-label={label} class="options">
          <li role="presentation" class="group">
            Your accounts
          </li>
          {ownShown.length ? ownShown.map((account, index) => option(account, index)) : <li class="muted empty-row">None matches.</li>}
          <li role="presentation" class="group">
            Customer accounts
          </li>
          {needle.length < 2 ? (
            <li class="muted empty-row">Type two letters or digits of a customer's name or account number.</li>
          ) : searching && found === null ? (
            <li class="muted empty-row">Searching…</li>
          ) : customers.length ? (
            customers.map((account, index) => option(account, ownShown.length + index))
          ) : (
            <li class="muted empty-row">No customer account matches “{query.trim()}”.</li>
          )}
        </ul>
      )}
    </div>
  );
}
