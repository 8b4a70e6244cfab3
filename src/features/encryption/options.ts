/**
 * Encrypted-argument options (Sidekiq Enterprise's `encrypt: true`): what
 * `defineJob({ encrypt })` and `client.push(job, args, { encrypt })`
 * accept, and the payload field the client writes.
 *
 * @module
 */
import type { OptionCheck, OptionRules } from "../../option_rules.ts";

/** The payload field marking a job whose last argument is encrypted: the envelope's format version (1). */
export const ENCRYPTED_FIELD = "edgekiq_encrypted";

/** The options encrypted arguments add to `defineJob`. */
export interface EncryptionJobOptions {
  /**
   * Encrypt the job's last argument (the "secret bag") in Redis with
   * AES-256-GCM; the others stay readable, for debugging. Needs
   * `encryptedArgs({ keys })` on the client and the worker. Ruby Sidekiq
   * cannot read these jobs.
   */
  encrypt?: boolean;
}

/** The options encrypted arguments add to a push. */
export interface EncryptionPushOptions {
  /** Overrides the job's `encrypt` for this push. */
  encrypt?: boolean;
}

const checkEncrypt: OptionCheck = (value, fail) => {
  if (typeof value !== "boolean") throw fail("'encrypt' must be true or false", value);
  return value;
};

/**
 * The rules of encrypted arguments' options, checked at `defineJob` (a
 * ConfigError) and at push (a PayloadError).
 *
 * @example
 * ```ts
 * const defineJob = createJobDefiner<EncryptionJobOptions>([ENCRYPTION_OPTION_RULES]);
 * ```
 */
export const ENCRYPTION_OPTION_RULES: OptionRules = {
  feature: "encryptedArgs({ keys })",
  job: { encrypt: { check: checkEncrypt } },
  push: { encrypt: checkEncrypt },
  fields: { [ENCRYPTED_FIELD]: "use the option 'encrypt'" },
};
