/**
 * What a dashboard request carries between the middleware and the pages:
 * the hono environment type, and the per-request view (links, nonce).
 *
 * @module
 */
import type { Client } from "../../client.ts";
import type { NavItem } from "./dashboard_feature.ts";

/** Per-request values the middleware sets for the routes. */
export interface DashboardVariables {
  /** This response's CSP nonce. */
  nonce: string;
  /** The path the browser sees the dashboard at (no trailing slash; `""` at the root). */
  base: string;
  /** The client for this request's transport. */
  client: Client<object>;
}

/** The hono environment of the dashboard app: platform bindings `E` and {@link DashboardVariables}. */
export interface DashboardEnv<E extends object = Record<string, unknown>> {
  /** The platform's bindings (Cloudflare env, ...). */
  Bindings: E;
  /** Values set by the dashboard's middleware. */
  Variables: DashboardVariables;
}

/** The core's nav sections; a page names the one it belongs to (a feature's page names its own). */
export type Section =
  | "dashboard"
  | "busy"
  | "queues"
  | "retries"
  | "scheduled"
  | "dead"
  | "none";

/** What every page needs to render its frame. */
export interface View {
  /** Link base, see {@link DashboardVariables.base}. */
  base: string;
  /** The CSP nonce for script and style tags. */
  nonce: string;
  /** The product name in the header and title. */
  title: string;
  /** Render time, ms since the epoch (relative times count from it). */
  now: number;
  /** The live poll interval in seconds (already clamped). */
  interval: number;
  /** Whether the interval came from the URL (it then wins over the browser's saved one). */
  intervalExplicit: boolean;
  /** Nav entries features add. */
  nav: readonly NavItem[];
  /**
   * Which Redis the page reads, for the footer: the transport's endpoint
   * (credentials masked) and the key prefix; absent before the caller is let in.
   */
  redis?: { endpoint: string; prefix: string };
}
