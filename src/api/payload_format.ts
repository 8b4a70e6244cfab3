/**
 * The time format an API rewrite keeps: the one a payload already uses.
 *
 * @module
 */
import { type JobPayload, TIME_FIELDS, type TimeFormat } from "../payload.ts";

/**
 * The time format to rewrite a payload in: the one its own time fields
 * already use (a Sidekiq 8 job keeps integer milliseconds, a Sidekiq 7 job
 * keeps float seconds), else the client's. Writing a millisecond time in
 * seconds format would append `.0` and turn it into a far-future float.
 */
export function formatOf(payload: JobPayload, fallback: TimeFormat): TimeFormat {
  for (const field of TIME_FIELDS) {
    const value = payload[field];
    if (typeof value === "number" && Number.isFinite(value) && value !== 0) return value > 1e11 ? "millis" : "seconds";
  }
  return fallback;
}
