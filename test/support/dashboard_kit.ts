/** The dashboard and the kit a feature's pages use, as tests import them. */
export { dashboard, honoApp } from "../../src/web/mod.ts";
export { lazyRoute } from "../../src/web/dashboard/render.ts";
