/**
 * The dashboard's static files, held in memory and served under
 * `<base>/assets/<name>-<hash>.<ext>`: the content hash in the name lets
 * browsers cache them for good while a new release is fetched at once.
 *
 * @module
 */
import { CLIENT_JS } from "./client_js.ts";
import { ICON_SVG } from "./icon.ts";
import { STYLE_CSS } from "./style.ts";
import { UPLOT_CSS, UPLOT_JS } from "./uplot.ts";

/** One served file. */
export interface Asset {
  /** The file name with its content hash, e.g. `app-1a2b3c4d.js`. */
  readonly file: string;
  /** The `Content-Type` it is served with. */
  readonly type: string;
  /** The content. */
  readonly body: string;
}

/** FNV-1a, 32 bits: a synchronous content hash, enough to bust caches. */
function hash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16).padStart(8, "0");
}

function asset(name: string, ext: string, type: string, body: string): Asset {
  return { file: `${name}-${hash(body)}.${ext}`, type, body };
}

/** Every asset by role: the stylesheet (uPlot's and ours), the page script, uPlot, the icon. */
export const ASSETS: { readonly css: Asset; readonly js: Asset; readonly uplot: Asset; readonly icon: Asset } = {
  css: asset("app", "css", "text/css; charset=utf-8", `${UPLOT_CSS}\n${STYLE_CSS}`),
  js: asset("app", "js", "text/javascript; charset=utf-8", CLIENT_JS),
  uplot: asset("uplot", "js", "text/javascript; charset=utf-8", UPLOT_JS),
  icon: asset("icon", "svg", "image/svg+xml", ICON_SVG),
};

const BY_FILE: ReadonlyMap<string, Asset> = new Map(Object.values(ASSETS).map((a) => [a.file, a]));

/**
 * The asset served under this file name, or `undefined`.
 *
 * @example
 * ```ts
 * assetByFile(ASSETS.js.file)?.type; // "text/javascript; charset=utf-8"
 * ```
 */
export function assetByFile(file: string): Asset | undefined {
  return BY_FILE.get(file);
}
