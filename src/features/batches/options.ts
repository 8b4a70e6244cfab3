/**
 * The batch feature's options: the push option `batch` (a scope from
 * `batch.add()`: `b.push(...)` sets it for you) and the payload fields the
 * feature owns (`bid`, `edgekiq_callback`), which a push's `extra` may not set
 * while the feature is on the client.
 *
 * @module
 */
import type { OptionRules } from "../../option_rules.ts";
import { BatchScope } from "./batch.ts";
import { CALLBACK_FIELD } from "./callbacks.ts";

/** The push options batches add to `client.push`. */
export interface BatchPushOptions {
  /**
   * Push into this batch: a scope `batch.add()` gives its function (the
   * scope's own `push` sets it). Needs the `batchJobs()` feature on the client.
   */
  batch?: BatchScope;
}

/**
 * The option rules of batches.
 *
 * @example
 * ```ts
 * createJobDefiner([BATCH_OPTION_RULES]);
 * ```
 */
export const BATCH_OPTION_RULES: OptionRules = {
  feature: "batchJobs()",
  push: {
    batch(value, fail) {
      if (!(value instanceof BatchScope)) throw fail("'batch' must be the scope batch.add() gives its function", value);
      return value;
    },
  },
  fields: {
    bid: "push inside batch.add() (the batch sets it)",
    [CALLBACK_FIELD]: "the batch sets it on its callbacks",
  },
};
