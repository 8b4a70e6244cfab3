/**
 * A unit of work: one fetched job as the engine hands it to a processor,
 * with what the engine needs to know of its past (Sidekiq's UnitOfWork).
 *
 * @module
 */
import { recoveredCount } from "../scripts/recovered_mark.ts";

/** A job handed to a processor. */
export interface UnitOfWork {
  readonly queue: string;
  readonly raw: string;
  /** Its token in the held hash, `batch * 1000 + index` (reliable fetch); 0 with basic fetch. */
  readonly token: number;
  /** It was held by a process that died: its start is written before it runs. */
  readonly recovered: boolean;
  /** It was running in a process that died: suspects run one at a time. */
  readonly suspect: boolean;
}

/**
 * The unit for a raw job fetched from `queue` under `token`.
 *
 * @example
 * ```ts
 * unitOfWork("default", '{"class":"A","edgekiq_recovered":1}', 1000).suspect; // true
 * ```
 */
export function unitOfWork(queue: string, raw: string, token: number): UnitOfWork {
  const count = recoveredCount(raw);
  return { queue, raw, token, recovered: count !== undefined, suspect: count !== undefined && count > 0 };
}
