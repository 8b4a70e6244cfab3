/**
 * What the dashboard takes from a feature: its pages (routes on the
 * dashboard's hono app, rendered in its frame with `Layout`), their nav
 * entry, the notices its actions leave, and its series on the Prometheus
 * endpoint (`metricsHandler()`, which shares the dashboard's auth rules). One slice of the whole contract
 * (`Feature`, in `src/features/feature.ts`); it also carries the client
 * slice, so the dashboard's own moves of jobs (retry, delete, kill) apply
 * the feature's entry ops.
 *
 * @module
 */
import type { JobSetOptions } from "../../api/job_set.ts";
import type { Client } from "../../client.ts";
import type { ClientFeature } from "../../client_feature.ts";
import type { MetricsSource } from "../metrics/metrics_source.ts";
import type { JobPayload } from "../../payload.ts";

/** Settings the routes read, fixed when the dashboard is built. */
export interface RouteDeps {
  /** Header and tab title. */
  title: string;
  /** Death handlers for jobs killed from the dashboard. */
  setOptions: JobSetOptions;
  /** Nav entries features add. */
  nav: readonly NavItem[];
  /** Notices features' actions leave, by name. */
  notices: Readonly<Record<string, { text: (n: number) => string; error?: boolean }>>;
  /** Buttons features add to each running job's row on the Busy page. */
  workActions: readonly WorkAction[];
  /** Features' sections of a job's page, each loaded on first use. */
  jobSections: readonly (() => Promise<JobSection>)[];
}

/**
 * A button a feature adds to each running job's row on the Busy page (the
 * cancel feature's Cancel). It posts `jid`, `action` (= `value`), an empty
 * `confirm` the page's script fills after the browser's dialog, and a
 * one-time `token` to `path`, a route the feature registers.
 */
export interface WorkAction {
  /** The route it posts to, under the dashboard (`/busy/cancel`). */
  readonly path: string;
  /** The `action` field it submits. */
  readonly value: string;
  readonly label: string;
  /** The question asked first, for this job. */
  readonly confirm: (job: { jid: string; className: string }) => string;
  /** Styles it as destructive. */
  readonly danger?: boolean;
}

declare const nodeBrand: unique symbol;

/**
 * A piece of a page a feature renders: a hono JSX node, opaque here so the
 * contract (and the root entry point's types) never name hono.
 */
export interface DashboardNode {
  readonly [nodeBrand]: true;
}

/** What a feature's job section is told of the job whose page is shown. */
export interface JobSectionInput {
  /** The job (a retry, scheduled or dead entry). */
  readonly payload: Readonly<JobPayload>;
  /** The dashboard's client for this request. */
  readonly client: Client<object>;
  /** The dashboard's link base (see `viewOf`). */
  readonly base: string;
  /** The page's clock, epoch ms. */
  readonly now: number;
}

/**
 * A section a feature adds to a job's page, below its fields (a batch's job
 * shows its batch and its place in a flow): a panel, or null for a job the
 * feature has nothing to say about. It may read Redis (one or two commands:
 * it runs on every view of the page).
 */
export type JobSection = (job: JobSectionInput) => Promise<DashboardNode | null>;

declare const appBrand: unique symbol;

/**
 * The dashboard's hono app, as a feature's `routes` receives it: opaque here,
 * so the contract (and the root entry point's types) never name hono; a
 * feature's page code takes the hono app with `honoApp(app)` from
 * `edgekiq/web`.
 */
export interface DashboardApp {
  readonly [appBrand]: true;
}

/** One nav entry a feature adds (after the core's Dead). */
export interface NavItem {
  /** The section its pages name in `Layout` (highlighted when one of them is shown). */
  readonly section: string;
  /** The path under the dashboard (`/periodic`). */
  readonly path: string;
  readonly label: string;
}

/** A feature's pages. */
export interface DashboardExtension {
  readonly nav?: readonly NavItem[];
  /** Registers the feature's routes on the dashboard app (after auth, CSRF and the body limit). */
  readonly routes?: (app: DashboardApp, deps: RouteDeps) => void;
  /** Notices its actions redirect with (`?notice=<name>&n=<count>`): the text, and whether it reads as an error. */
  readonly notices?: Readonly<Record<string, { text: (n: number) => string; error?: boolean }>>;
  /** Buttons on each running job's row of the Busy page. */
  readonly workActions?: readonly WorkAction[];
  /** Its series on the Prometheus endpoint (`metricsHandler()`), read with a fixed number of commands per scrape. */
  readonly metrics?: MetricsSource;
  /**
   * Its section of a job's page, loaded on the first job page shown (a
   * `.tsx` module, like `lazyRoute`'s handlers: the feature never loads hono).
   */
  readonly jobSection?: () => Promise<JobSection>;
}

/**
 * A feature, as the dashboard sees it.
 *
 * @example
 * ```ts
 * const hello: DashboardFeature = {
 *   name: "hello",
 *   dashboard: {
 *     nav: [{ section: "hello", path: "/hello", label: "Hello" }],
 *     routes: (app, deps) =>
 *       honoApp(app).get("/hello", (c) => page(c, <MessagePage view={viewOf(c, deps)} heading="Hello" message="Hi" />)),
 *   },
 * };
 * ```
 */
export interface DashboardFeature extends ClientFeature {
  readonly dashboard?: DashboardExtension;
}
