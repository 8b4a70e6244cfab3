/**
 * The rule every dashboard action that acts on much at once, or cannot be
 * undone, follows (retry all, clear or pause a queue, stop all, cancel a
 * job): it runs only once the user confirmed it (the browser's dialog, or a
 * confirmation page without JavaScript) and only once per form (a one-time
 * token). Features' actions use it too.
 *
 * @module
 */
import { ConfirmPage } from "./pages/message.tsx";
import { ParamError } from "./params.ts";
import { claimOnce, field, type Form, list } from "./form.ts";
import { type Ctx, page, type RouteDeps, viewOf } from "./render.ts";
import { isToken } from "./token.ts";

/** The form fields a confirmation page carries over to the form it asks to send again. */
const CARRIED = ["action", "token", "scope", "asof", "from", "jid"];

/** Whether the form says the user was asked (by the browser's dialog or the confirmation page). */
export const confirmed = (form: Form): boolean => field(form, "confirm") === "1";

/**
 * The confirmation page for a destructive form posted without `confirm=1`
 * (no script ran to ask): it repeats the form's `names` fields, every value
 * of each, with `confirm=1`.
 *
 * @example
 * ```ts
 * if (!confirmed(form)) return await confirmPage(c, deps, form, ["action", "key"], { question, action: path, back: path });
 * ```
 */
export async function confirmPage(
  c: Ctx,
  deps: RouteDeps,
  form: Form,
  names: readonly string[],
  step: { question: string; action: string; back: string },
): Promise<Response> {
  const fields: Record<string, string[]> = {};
  for (const name of names) {
    const values = list(form, name);
    if (values.length > 0) fields[name] = values;
  }
  const base = c.get("base");
  return await page(
    c,
    <ConfirmPage
      view={viewOf(c, deps)}
      question={step.question}
      action={base + step.action}
      fields={fields}
      back={base + step.back}
    />,
  );
}

/**
 * Runs an action once: asks for confirmation if the form lacks it, then
 * runs it through {@link claimOnce} (a replayed form runs nothing) and
 * redirects to `back` with the notice `run` names.
 *
 * @example
 * ```ts
 * return await onceConfirmed(c, deps, form, { question: "Clear queue x?", action: "/queues/x", back: "/queues" },
 *   async () => { await queue.clear(); return ["cleared", 1]; });
 * ```
 */
export async function onceConfirmed(
  c: Ctx,
  deps: RouteDeps,
  form: Form,
  step: { question: string; action: string; back: string },
  run: () => Promise<[notice: string, n: number]>,
): Promise<Response> {
  const token = field(form, "token");
  if (!isToken(token)) {
    throw new ParamError("Cannot run this action as its form has no valid token: reload the page and try again");
  }
  if (!confirmed(form)) return await confirmPage(c, deps, form, CARRIED, step);
  return await claimOnce(c, token, step.back, run);
}
