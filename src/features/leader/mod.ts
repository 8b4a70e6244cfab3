/**
 * Leader election: one process of a fleet leads at a time, on a lease in
 * Redis renewed with the heartbeat, with a fencing token per term. A
 * feature: the engine knows nothing of it. See docs/operations.md.
 *
 * @example
 * ```ts
 * import { createWorker } from "edgekiq";
import { leaderElection } from "edgekiq/features";
 *
 * const leader = leaderElection();
 * createWorker({ transport, jobs, features: [leader] });
 * leader.onLeader(({ token }) => console.log("leading, term", token));
 * ```
 *
 * @module
 */
export { leaderElection } from "./leader_election.ts";
export type { LeaderCallback, LeaderElection, LeaderElectionOptions, LeaderTerm } from "./leader_election.ts";
