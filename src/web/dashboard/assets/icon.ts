/**
 * The dashboard's favicon, an SVG as a string.
 *
 * @module
 */

/** A rounded square in the accent colour with three stacked bars: jobs in a queue. */
export const ICON_SVG: string =
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#0f766e"/>` +
  `<rect x="7" y="8" width="18" height="4" rx="2" fill="#fff"/><rect x="7" y="14" width="13" height="4" rx="2" fill="#fff"/>` +
  `<rect x="7" y="20" width="8" height="4" rx="2" fill="#fff"/></svg>`;
