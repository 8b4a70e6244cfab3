/**
 * Encrypted arguments as a feature (Sidekiq Enterprise's `encrypt: true`):
 * the client encrypts a job's last argument (the "secret bag") with the
 * newest key before it is written; a worker or drain decrypts it in its
 * `receive` hook, before the arguments are checked, for that run only.
 *
 * What never holds the secret: Redis (queues, schedule, retry and dead sets,
 * the work hash the Busy page reads), edgekiq's log lines and its own error
 * messages (an argument check that fails on the decrypted value is buried
 * with the schema's messages withheld). A job that cannot be decrypted (no
 * key of its version here, a wrong key, altered text) goes to the dead set
 * with the reason, never to a retry loop. What `perform` itself throws or
 * logs is its own: an error message that quotes the secret is stored as
 * written, as in Sidekiq Enterprise.
 *
 * @module
 */
import type { ClientMiddleware, PushContextOptions } from "../../client_middleware.ts";
import { EncryptionError, JobArgsError, PayloadError } from "../../errors.ts";
import { type AnyJob, validateArgs } from "../../job.ts";
import type { JobPayload } from "../../payload.ts";
import { sanitize } from "../../sanitize.ts";
import type { Feature } from "../feature.ts";
import { type EncryptionKey, Keyring } from "./keyring.ts";
import {
  ENCRYPTED_FIELD,
  ENCRYPTION_OPTION_RULES,
  type EncryptionJobOptions,
  type EncryptionPushOptions,
} from "./options.ts";

/** Options for {@link encryptedArgs}. */
export interface EncryptedArgsOptions {
  /**
   * Versioned keys, `{ 1: key, 2: newerKey }`: the newest version encrypts,
   * every version decrypts. Each key is 32 random bytes (a `Uint8Array` or
   * its base64 text) or an AES-GCM 256 `CryptoKey`. Make one with
   * `btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))))`.
   */
  keys: Readonly<Record<number, EncryptionKey>>;
}

/** The encrypted-arguments feature. */
export interface EncryptedArgs extends Feature {
  readonly name: "encryption";
  /** The version new jobs are encrypted with (the newest key's). */
  readonly currentVersion: number;
}

/**
 * Encrypted arguments: jobs (or pushes) with `encrypt: true` have their last
 * argument encrypted in Redis with AES-256-GCM. Give it to the client that
 * pushes and every worker that runs, each with the keys; list it last among
 * the client's features, so other features' middleware see the arguments
 * as given (and mind that a `unique` job's lock is named after its
 * arguments: use `unique.by` to leave the secret out).
 *
 * @example
 * ```ts
 * const encryption = encryptedArgs({ keys: { 1: env.EDGEKIQ_KEY_1, 2: env.EDGEKIQ_KEY_2 } });
 * const Charge = defineJob({ name: "Charge", encrypt: true, perform(_ctx, orderId: number, card: { pan: string }) {} });
 * await createClient({ transport, features: [encryption] }).push(Charge, [42, { pan: "4242..." }]);
 * createWorker({ transport, jobs: [Charge], features: [encryption] });
 * ```
 */
export function encryptedArgs(options: EncryptedArgsOptions): EncryptedArgs {
  const keyring = new Keyring(options?.keys);

  const client: ClientMiddleware = Object.assign(
    async (
      payload: Parameters<ClientMiddleware>[0],
      ctx: Parameters<ClientMiddleware>[1],
      next: () => Promise<void>,
    ) => {
      // A move of a job already encrypted (a promotion, an API retry) is left as it is.
      if (payload[ENCRYPTED_FIELD] !== undefined || !wantsEncryption(ctx.job, ctx.options)) return next();
      const args = payload.args;
      if (!Array.isArray(args) || args.length === 0) {
        throw new PayloadError(
          `Cannot push job ${sanitize(payload.class, 100)} as 'encrypt' needs at least one argument: ` +
            "the last one is encrypted (pass null first to keep nothing readable)",
        );
      }
      payload.args = [...args.slice(0, -1), await keyring.encrypt(args[args.length - 1])];
      payload[ENCRYPTED_FIELD] = 1;
      return next();
    },
    { appliesTo: wantsEncryption },
  );

  return Object.freeze(
    {
      name: "encryption",
      options: ENCRYPTION_OPTION_RULES,
      client,
      // Each job is encrypted and decrypted on its own: nothing is shared across a sharded namespace.
      perShard: true,
      currentVersion: keyring.current,
      // A job not encrypted is let through at once (no promise).
      receive: (payload, job) => payload[ENCRYPTED_FIELD] === undefined ? undefined : decrypt(payload, job),
    } satisfies EncryptedArgs,
  );

  /** Decrypts the last argument into `payload.args`, for this run only, after checking it. */
  async function decrypt(payload: JobPayload, job: AnyJob): Promise<void> {
    const label = `job ${sanitize(payload.class, 100)} (jid ${sanitize(String(payload.jid), 40)})`;
    const args = Array.isArray(payload.args) ? payload.args : [];
    let plain: unknown;
    try {
      plain = await keyring.decrypt(args[args.length - 1]);
    } catch (error) {
      if (!(error instanceof EncryptionError)) throw error;
      throw new EncryptionError(`Cannot decrypt the arguments of ${label} as ${error.message}`, {
        cause: error.cause,
      });
    }
    const decrypted = [...args.slice(0, -1), plain];
    // Checked here first: a schema's message may quote the value it refused.
    if (job.name === payload.class) await checkWithheld(job, decrypted, label);
    payload.args = decrypted;
  }
}

/** Whether a push encrypts: its own `encrypt`, else its job's. */
function wantsEncryption(job: AnyJob | undefined, options: Readonly<PushContextOptions> | undefined): boolean {
  const own = (options as EncryptionPushOptions | undefined)?.encrypt;
  return (own ?? (job?.options as EncryptionJobOptions | undefined)?.encrypt) === true;
}

/** The job's argument check on decrypted arguments, its messages withheld on failure. */
async function checkWithheld(job: AnyJob, args: unknown[], label: string): Promise<void> {
  try {
    await validateArgs(job, args);
  } catch (error) {
    if (!(error instanceof JobArgsError)) throw error;
    const n = error.issues.length;
    throw new JobArgsError(
      `Cannot run ${label} as its arguments do not match its schema (${n} issue${n === 1 ? "" : "s"}; ` +
        "the messages are withheld, as its last argument is encrypted)",
      error.issues.map(() => ({ path: "args", message: "withheld: the arguments are encrypted" })),
    );
  }
}
