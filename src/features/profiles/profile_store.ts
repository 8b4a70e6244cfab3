/**
 * Where recorded CPU profiles live: one hash per profiled run (the profile
 * JSON and what it was), expiring, and a sorted set indexing them, trimmed
 * to the newest `keep`. Written in one MULTI, read a page at a time.
 *
 * @module
 */
import type { Keys } from "../../keys.ts";
import type { Transport } from "../../transport/transport.ts";
import { invalid } from "../../api/arguments.ts";
import { arr, pairs, str } from "../../transport/reply_readers.ts";

/** One recorded profile, without its data. */
export interface ProfileEntry {
  readonly jid: string;
  /** The job class. */
  readonly className: string;
  /** The label the push gave (`profile: "mike"`), or the class. */
  readonly label: string;
  /** Epoch ms when the run started, and how long it took. */
  readonly startedAt: number;
  readonly ms: number;
  /** The profile's size in bytes (0 when it was too large to keep: see `note`). */
  readonly bytes: number;
  /** Why there is no data, if there is none. */
  readonly note: string | undefined;
  /** The runtime that recorded it (`node`, `deno`, `bun`). */
  readonly runtime: string;
}

/** What {@link saveProfile} writes. */
export interface ProfileRecord extends Omit<ProfileEntry, "bytes"> {
  /** The `.cpuprofile` JSON, or undefined when it was not kept. */
  readonly data: string | undefined;
}

/**
 * Writes one profile, indexes it and trims the index, in one MULTI.
 *
 * @example
 * ```ts
 * await saveProfile({ transport, keys: keys() }, record, { keep: 100, ttlSeconds: 604800 });
 * ```
 */
export async function saveProfile(
  target: { transport: Transport; keys: Keys },
  record: ProfileRecord,
  limits: { keep: number; ttlSeconds: number },
): Promise<void> {
  const { transport, keys: k } = target;
  const key = k.profile(record.jid);
  await transport.pipeline([
    [
      "HSET",
      key,
      "class",
      record.className,
      "label",
      record.label,
      "started_at",
      record.startedAt,
      "ms",
      Math.round(record.ms),
      "runtime",
      record.runtime,
      "note",
      record.note ?? "",
      "bytes",
      record.data === undefined ? 0 : new TextEncoder().encode(record.data).length,
      "data",
      record.data ?? "",
    ],
    ["EXPIRE", key, limits.ttlSeconds],
    ["ZADD", k.profiles, (record.startedAt + record.ms) / 1000, record.jid],
    ["ZREMRANGEBYRANK", k.profiles, 0, -(limits.keep + 1)],
    // Entries whose hash expired are dropped from the index by age too.
    ["ZREMRANGEBYSCORE", k.profiles, "-inf", Date.now() / 1000 - limits.ttlSeconds],
  ], { atomic: true });
}

/**
 * The newest profiles, newest first: one ZRANGE and one pipeline of HMGETs.
 *
 * @example
 * ```ts
 * const entries = await listProfiles(client, { limit: 50 });
 * ```
 */
export async function listProfiles(
  client: { transport: Transport; keys: Keys },
  options: { limit?: number } = {},
): Promise<ProfileEntry[]> {
  const limit = options.limit ?? 100;
  if (!Number.isInteger(limit) || limit <= 0) throw invalid("list profiles", "limit", "a whole number > 0", limit);
  const jids = pairs(await client.transport.call("ZRANGE", client.keys.profiles, 0, limit - 1, "REV", "WITHSCORES"))
    .map(([jid]) => jid);
  if (jids.length === 0) return [];
  const fields = ["class", "label", "started_at", "ms", "runtime", "note", "bytes"] as const;
  const replies = await client.transport.pipeline(
    jids.map((jid) => ["HMGET", client.keys.profile(jid), ...fields] as const),
  );
  const out: ProfileEntry[] = [];
  jids.forEach((jid, i) => {
    const [cls, label, started, ms, runtime, note, bytes] = arr(replies[i]).map((v) => str(v));
    if (cls === null) return; // expired since it was indexed
    out.push({
      jid,
      className: cls,
      label: label ?? cls,
      startedAt: Number(started),
      ms: Number(ms),
      runtime: runtime ?? "",
      note: note || undefined,
      bytes: Number(bytes) || 0,
    });
  });
  return out;
}

/**
 * One profile's `.cpuprofile` JSON, or undefined when it is gone or was not kept.
 *
 * @example
 * ```ts
 * const json = await profileData(client, jid); // open it in speedscope or Chrome DevTools
 * ```
 */
export async function profileData(
  client: { transport: Transport; keys: Keys },
  jid: string,
): Promise<string | undefined> {
  if (typeof jid !== "string" || jid === "") throw invalid("read profile", "jid", "a non-empty string", jid);
  const data = await client.transport.call("HGET", client.keys.profile(jid), "data");
  return typeof data === "string" && data !== "" ? data : undefined;
}
