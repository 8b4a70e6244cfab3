/**
 * The Profiles pages in the dashboard: the nav entry and the routes (their
 * handlers load on first use, so the feature itself never loads hono).
 *
 * @module
 */
import type { DashboardExtension } from "../../web/dashboard/dashboard_feature.ts";
import { lazyRoute } from "../../web/dashboard/render.ts";

const pages = () => import("./profiles_pages.tsx");

/**
 * The Profiles pages: the list, one profile's hottest functions, and its
 * `.cpuprofile` download.
 *
 * @example
 * ```ts
 * const feature = { name: "profiles", dashboard: PROFILES_DASHBOARD };
 * ```
 */
export const PROFILES_DASHBOARD: DashboardExtension = {
  nav: [{ section: "profiles", path: "/profiles", label: "Profiles" }],
  routes(app, deps) {
    lazyRoute(app, deps, "GET", "/profiles", () => pages().then((m) => m.profilesList));
    lazyRoute(app, deps, "GET", "/profiles/:jid", () => pages().then((m) => m.profileDetail));
    lazyRoute(app, deps, "GET", "/profiles/:jid/download", () => pages().then((m) => m.profileDownload));
  },
};
