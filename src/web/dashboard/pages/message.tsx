/**
 * Pages that only say something: errors (400, 401, 403, 404, 500), and the
 * confirmation a destructive "all" action asks for when the browser ran no
 * script to ask it.
 *
 * @module
 */
import type { Child } from "hono/jsx";
import type { StatsSnapshot } from "../../../api/stats.ts";
import { Layout } from "../layout.tsx";
import type { View } from "../view.ts";

/**
 * A message page; without `stats` it shows no counters (nothing is read
 * from Redis for a caller who is not signed in).
 *
 * @example
 * ```tsx
 * <MessagePage view={view} heading="Not found" message="No such page." />
 * ```
 */
export function MessagePage(props: { view: View; heading: string; message: string; stats?: StatsSnapshot }): Child {
  return (
    <Layout view={props.view} section="none" heading={props.heading} stats={props.stats}>
      <div class="panel confirm">
        <h1>{props.heading}</h1>
        <p>{props.message}</p>
        <p>
          <a href={props.view.base || "/"}>Back to the dashboard</a>
        </p>
      </div>
    </Layout>
  );
}

/**
 * Asks before a destructive action the browser did not confirm (no script
 * ran), repeating the submitted form, every value of each field, with
 * `confirm=1`.
 *
 * @example
 * ```tsx
 * <ConfirmPage view={view} question="Delete all 3 retries?" action="/jobs/retries/all" fields={{ action: "delete", token }} back="/jobs/retries" />
 * ```
 */
export function ConfirmPage(
  props: {
    view: View;
    question: string;
    action: string;
    fields: Record<string, string | readonly string[]>;
    back: string;
  },
): Child {
  return (
    <Layout view={props.view} section="none" heading="Confirm">
      <div class="panel confirm">
        <h1>Are you sure?</h1>
        <p>{props.question}</p>
        <form method="post" action={props.action} class="actions">
          {Object.entries(props.fields).flatMap(([name, values]) =>
            [values].flat().map((value, i) => <input key={`${name}-${i}`} type="hidden" name={name} value={value} />)
          )}
          <input type="hidden" name="confirm" value="1" />
          <button type="submit" class="danger">Yes, do it</button>
          <a class="btn" href={props.back}>Cancel</a>
        </form>
      </div>
    </Layout>
  );
}
