/**
 * Encrypted arguments (Sidekiq Enterprise's `encrypt: true`): a job's last
 * argument is stored in Redis encrypted with AES-256-GCM under versioned,
 * rotatable keys, and decrypted only for its run. Ruby Sidekiq cannot read
 * these jobs. See docs/operations.md.
 *
 * @example
 * ```ts
 * import { createClient, createWorker, defineJob } from "edgekiq";
import { encryptedArgs } from "edgekiq/features";
 *
 * const encryption = encryptedArgs({ keys: { 1: process.env.EDGEKIQ_KEY_1! } });
 * const Charge = defineJob({ name: "Charge", encrypt: true, perform(_ctx, orderId: number, card: { pan: string }) {} });
 * await createClient({ transport, features: [encryption] }).push(Charge, [42, { pan: "4242 4242 4242 4242" }]);
 * createWorker({ transport, jobs: [Charge], features: [encryption] });
 * ```
 *
 * @module
 */
export { encryptedArgs } from "./encrypted_args.ts";
export type { EncryptedArgs, EncryptedArgsOptions } from "./encrypted_args.ts";
export type { EncryptionKey } from "./keyring.ts";
export { ENCRYPTION_OPTION_RULES } from "./options.ts";
export type { EncryptionJobOptions, EncryptionPushOptions } from "./options.ts";
