/**
 * Why a Postgres store could not be opened, from the error `pg` raised: a socket errno
 * (connection refused, host not found, no answer) or the server's SQLSTATE (authentication
 * failed, no such database, permission denied, starting up). Each reason names the fix. And the
 * store's URL as messages show it, its password redacted.
 *
 * @example
 * ```ts
 * import { postgresOpenError, redactUrl } from "./postgres-open-error.ts";
 *
 * declare const url: string; // postgres://user:password@host/db
 * declare const err: unknown; // what the driver threw
 * throw postgresOpenError(redactUrl(url), new URL(url), "polyrl", err);
 * ```
 */
import { StoreOpenError } from "../errors.ts";

/** The URL with its password replaced, fit for messages and `store.target`. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return url.replace(/:[^:@/]*@/, ":***@");
  }
}

/** The parts of a `pg` error that tell the cause. */
interface PgErrorLike {
  readonly code?: string;
  readonly message?: string;
}

const NO_ANSWER = new Set(["ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ECONNRESET", "EPIPE"]);

function reason(err: PgErrorLike, url: URL, schema: string): string {
  const where = `${url.hostname}:${url.port || "5432"}`;
  const user = decodeURIComponent(url.username) || "(the default user)";
  const database = decodeURIComponent(url.pathname.slice(1)) || user;
  const said = err.message ?? String(err);
  const code = err.code ?? "";
  if (code === "ECONNREFUSED") {
    return `connection refused at ${where}: no Postgres server listens there; start it, or ` +
      "fix the host and port in the URL";
  }
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") {
    return `host ${url.hostname} not found (${code}); fix the host in the URL`;
  }
  if (NO_ANSWER.has(code) || /timeout/i.test(said)) {
    return `no answer from ${where} (${code || said}); check that the server runs and that ` +
      "this machine can reach it";
  }
  switch (code) {
    case "28P01":
      return `password authentication failed for user ${user} at ${where}; fix the password ` +
        "in the URL";
    case "28000":
      return `the server at ${where} refuses user ${user} (${said}); check the user name, or ` +
        "the server's pg_hba.conf";
    case "3D000":
      return `database ${database} does not exist on ${where}; create it ` +
        `(createdb ${database}) or fix the database name in the URL`;
    case "42501":
      return `permission denied to user ${user} (${said}); reading a store needs USAGE on ` +
        `schema ${schema} and SELECT on its tables (GRANT USAGE ON SCHEMA ${schema} TO ` +
        `${user}; GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${user}), writing one ` +
        "also CREATE on the database";
    case "57P03":
      return `the server at ${where} is starting up or shutting down (${said}); retry shortly`;
    case "53300":
      return `the server at ${where} has no connection slot free (${said}); retry later, or ` +
        "raise max_connections";
  }
  return `Postgres at ${where} failed: ${[code, said].filter(Boolean).join(": ")}`;
}

/** The StoreOpenError for `err`, raised while opening the store at `url` (schema `schema`). */
export function postgresOpenError(
  target: string,
  url: URL,
  schema: string,
  err: unknown,
): StoreOpenError {
  if (err instanceof StoreOpenError) return err;
  return new StoreOpenError(target, reason(err as PgErrorLike, url, schema), { cause: err });
}
