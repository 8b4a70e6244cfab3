/**
 * The scaffold most engine and client test files share: one suite per
 * transport target, the target opened once and flushed before each test, and
 * a worker slot stopped after each test.
 */
import { afterEach, beforeEach, describe } from "node:test";
import type { Transport, Worker } from "../../mod.ts";
import { matrix, type Target, type TargetName } from "./matrix.ts";

/** What a suite body sees of its target. */
export interface TargetSuite {
  readonly target: Target;
  /** The target's transport (opened once per file, flushed before each test). */
  readonly redis: Transport;
  /** A worker the test started: stopped after the test. */
  worker: Worker | undefined;
}

/**
 * Declares `describe("<title> on <target>")` for each target of the matrix.
 *
 * @example
 * ```ts
 * eachTarget("engine", (t) => {
 *   it("runs a job", async () => { t.worker = testWorker(t.redis, { jobs: [J] }); await t.worker.run(); });
 * });
 * ```
 */
export function eachTarget(title: string, body: (t: TargetSuite) => void, names?: TargetName[]): void {
  for (const target of matrix(names)) {
    describe(`${title} on ${target.name}`, () => {
      let redis: Transport | undefined;
      const suite: TargetSuite = {
        target,
        get redis() {
          if (!redis) throw new Error("the target opens before each test");
          return redis;
        },
        worker: undefined,
      };
      beforeEach(async () => {
        redis ??= await target.open();
        await target.flush();
      });
      afterEach(async () => {
        await suite.worker?.stop();
        suite.worker = undefined;
      });
      body(suite);
    });
  }
}
