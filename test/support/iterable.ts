/**
 * An iterable job for tests that records what it did: every item it
 * processed (`seen`), every hook call (`hooks`, with the run number), and
 * the context of the last hook.
 */
import * as v from "valibot";
import { defineIterableJob, iterateArray, type IterationContext, type Job } from "../../mod.ts";

export interface Walker {
  job: Job<[number], [number]>;
  /** Items processed, in order (a repeat shows twice). */
  seen: number[];
  /** Hook calls: `start:1`, `resume:2`, `stop`, `cancel`, `complete` (`complete!` when cancelled). */
  hooks: string[];
}

export interface WalkerOptions {
  name?: string;
  retry?: number | boolean;
  flushInterval?: number;
  maxIterationRuntime?: number;
  /** Runs after an item is recorded. */
  perItem?: (ctx: IterationContext<number, number>, item: number) => unknown;
}

/** `Walk(count)` walks the numbers 0 .. count-1. */
export function walker(options: WalkerOptions = {}): Walker {
  const seen: number[] = [];
  const hooks: string[] = [];
  const job = defineIterableJob({
    name: options.name ?? "Walk",
    retry: options.retry ?? 3,
    flushInterval: options.flushInterval,
    maxIterationRuntime: options.maxIterationRuntime,
    args: v.tuple([v.number()]),
    each: (_ctx, cursor: number | null, count) => iterateArray(Array.from({ length: count }, (_, i) => i), cursor),
    async perItem(ctx, item) {
      seen.push(item);
      await options.perItem?.(ctx, item);
    },
    onStart: (ctx) => void hooks.push(`start:${ctx.executions}`),
    onResume: (ctx) => void hooks.push(`resume:${ctx.executions}`),
    onStop: () => void hooks.push("stop"),
    onCancel: () => void hooks.push("cancel"),
    onComplete: (ctx) => void hooks.push(ctx.cancelled ? "complete!" : "complete"),
  });
  return { job, seen, hooks };
}

/** 0 .. n-1. */
export const upTo = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

/** Resolves after `ms`. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
