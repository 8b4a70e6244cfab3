/**
 * The hottest functions of a `.cpuprofile`: self time per function, from its
 * samples, for a page that shows where a run spent its time without a
 * flame-graph library (the download opens in speedscope for the rest).
 *
 * @module
 */

/** One function's share of a profile. */
export interface HotFunction {
  /** Its name (`(anonymous)` when it has none), and where it is. */
  readonly name: string;
  readonly location: string;
  /** Samples taken while it was on top of the stack, and their share of all samples. */
  readonly samples: number;
  readonly share: number;
}

interface ProfileNode {
  id: number;
  callFrame?: { functionName?: string; url?: string; lineNumber?: number };
}

/**
 * The `limit` functions with the most self samples, most first; empty for
 * text that is not a profile.
 *
 * @example
 * ```ts
 * hotFunctions(json, 20)[0]; // { name: "parse", location: "file:///app/job.js:12", samples: 410, share: 0.41 }
 * ```
 */
export function hotFunctions(json: string, limit: number): HotFunction[] {
  let profile: { nodes?: ProfileNode[]; samples?: number[] };
  try {
    profile = JSON.parse(json);
  } catch {
    return [];
  }
  const nodes = new Map((profile.nodes ?? []).map((n) => [n.id, n]));
  const bySelf = new Map<string, { name: string; location: string; samples: number }>();
  const samples = profile.samples ?? [];
  for (const id of samples) {
    const frame = nodes.get(id)?.callFrame ?? {};
    const name = frame.functionName || "(anonymous)";
    const location = frame.url ? `${frame.url}:${(frame.lineNumber ?? 0) + 1}` : "";
    const key = `${name}\0${location}`;
    const entry = bySelf.get(key) ?? { name, location, samples: 0 };
    entry.samples++;
    bySelf.set(key, entry);
  }
  return [...bySelf.values()]
    .sort((a, b) => b.samples - a.samples)
    .slice(0, limit)
    .map((e) => ({ ...e, share: samples.length ? e.samples / samples.length : 0 }));
}
