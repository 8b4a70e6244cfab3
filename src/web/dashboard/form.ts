/**
 * What the POST routes share: reading form fields, and running an action
 * at most once per form. An action that must not run twice (retry all,
 * clear a queue, enqueue a periodic job now) sends a one-time token; the
 * first request claims it (`SET NX EX`), so a replayed form, a double click
 * or a resent request does nothing and says so.
 *
 * @module
 */
import { ParamError } from "./params.ts";
import { type Ctx, redirectWith } from "./render.ts";
import { isToken, newToken } from "./token.ts";

/** How long a used token is remembered, seconds. */
const TOKEN_TTL = 86_400;

/** A parsed form, as hono's `parseBody({ all: true })` returns it. */
export type Form = Record<string, string | File | (string | File)[]>;

/**
 * A field's first value, if it is text.
 *
 * @example
 * ```ts
 * field(await c.req.parseBody({ all: true }), "action"); // "retry"
 * ```
 */
export function field(form: Form, name: string): string | undefined {
  const value = form[name];
  const one = Array.isArray(value) ? value[0] : value;
  return typeof one === "string" ? one : undefined;
}

/**
 * Every text value of a field.
 *
 * @example
 * ```ts
 * list(form, "key"); // ["1700000000.5-0a1b...", ...]
 * ```
 */
export function list(form: Form, name: string): string[] {
  const value = form[name];
  return (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter((v) =>
    typeof v === "string"
  ) as string[];
}

/**
 * Runs `run` only if this form's token was never used, then redirects to
 * `back` with the notice `run` names; a used token redirects with
 * `already-done` and runs nothing. A failed run frees the token so the
 * user can try again from the same page.
 *
 * @example
 * ```ts
 * return await claimOnce(c, field(form, "token"), "/periodic", async () => ["enqueued", 1]);
 * ```
 */
export async function claimOnce(
  c: Ctx,
  token: string | undefined,
  back: string,
  run: () => Promise<[notice: string, n: number]>,
): Promise<Response> {
  if (!isToken(token)) {
    throw new ParamError("Cannot run this action as its form has no valid token: reload the page and try again");
  }
  const client = c.get("client");
  const key = client.keys.webAction(token);
  const claim = newToken();
  const set = await client.transport.call("SET", key, claim, "NX", "EX", TOKEN_TTL);
  // A lost reply may be resent by the client: the key holding our own claim is still ours.
  if (set === null && (await client.transport.call("GET", key)) !== claim) return redirectWith(c, back, "already-done");
  try {
    const [notice, n] = await run();
    return redirectWith(c, back, notice, n);
  } catch (error) {
    await client.transport.call("DEL", key).catch(() => {});
    throw error;
  }
}
