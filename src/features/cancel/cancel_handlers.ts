/**
 * `POST /busy/cancel` (loaded on a dashboard's first request for it, see
 * `cancel_dashboard.ts`): cancels the job named by the form's `jid`, once
 * confirmed and once per form (a one-time token), as every other action
 * that cannot be undone.
 *
 * @module
 */
import { field } from "../../web/dashboard/form.ts";
import { onceConfirmed } from "../../web/dashboard/once_confirmed.tsx";
import { ParamError } from "../../web/dashboard/params.ts";
import type { PageHandler } from "../../web/dashboard/render.ts";
import { cancelJob } from "../../api/cancel_job.ts";

/** A jid as a form may carry it: printable ASCII without spaces, at most 100 characters. */
const JID = /^[\x21-\x7e]{1,100}$/;

/** `POST /busy/cancel`: `action` = cancel, `jid`, `token`, `confirm`. */
export const cancelAction: PageHandler = async (c, deps) => {
  const form = await c.req.parseBody({ all: true });
  if (field(form, "action") !== "cancel") throw new ParamError("Cannot cancel the job as 'action' must be cancel");
  const jid = field(form, "jid");
  if (jid === undefined || !JID.test(jid)) {
    throw new ParamError("Cannot cancel the job as the form has no valid 'jid' (up to 100 printable characters)");
  }
  const question = `Cancel job ${jid}? Its ctx.stopping aborts and it is not retried; this cannot be undone.`;
  return await onceConfirmed(c, deps, form, { question, action: "/busy/cancel", back: "/busy" }, async () => {
    await cancelJob(c.get("client"), jid);
    return ["job-cancelled", 1];
  });
};
