/**
 * BITFIELD and BITFIELD_RO: the memory transport must answer as redis-server
 * does, since the metrics histograms use them. The same expectations run on
 * both.
 */
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { RedisArg, Transport } from "../../src/transport/transport.ts";
import { matrix } from "../support/matrix.ts";

for (const target of matrix(["memory", "ioredis", "bun"])) {
  describe(`BITFIELD on ${target.name}`, () => {
    let redis: Transport;
    const bf = (...args: RedisArg[]) => redis.call("BITFIELD", ...args);
    beforeEach(async () => {
      redis ??= await target.open();
      await target.flush();
    });

    it("increments, saturates, wraps and fails as told", async () => {
      assert.deepEqual(await bf("h", "OVERFLOW", "SAT", "INCRBY", "u16", "#3", 65530, "INCRBY", "u16", "#3", 10), [
        65530,
        65535,
      ]);
      assert.deepEqual(await bf("h", "INCRBY", "u16", "#3", 1), [0], "WRAP is the default");
      assert.deepEqual(await bf("h", "OVERFLOW", "FAIL", "INCRBY", "u16", "#3", -1, "GET", "u16", "#3"), [null, 0]);
      assert.deepEqual(await bf("h", "SET", "i8", 0, -5, "GET", "i8", 0, "GET", "u8", 0), [0, -5, 251]);
      assert.deepEqual(await bf("h", "OVERFLOW", "SAT", "INCRBY", "i8", 0, -200), [-128]);
      assert.deepEqual(await bf("h", "INCRBY", "i8", 0, -1), [127]);
      // Unaligned: bits 5-8 straddle bytes 0 (127) and 1.
      assert.deepEqual(await bf("h", "SET", "u4", 5, 0, "GET", "u4", 5, "GET", "u8", 0, "GET", "u8", 8), [
        14,
        0,
        120,
        0,
      ]);
    });

    it("reads zeros past the end, and BITFIELD_RO only reads", async () => {
      assert.deepEqual(await redis.call("BITFIELD_RO", "missing", "GET", "u16", "#25"), [0]);
      assert.equal(await redis.call("EXISTS", "missing"), 0);
      await bf("h", "INCRBY", "u16", "#1", 7);
      assert.deepEqual(await redis.call("BITFIELD_RO", "h", "GET", "u16", "#0", "GET", "u16", "#1", "GET", "u16", 16), [
        0,
        7,
        7,
      ]);
      await assert.rejects(
        redis.call("BITFIELD_RO", "h", "INCRBY", "u16", "#1", 1),
        /BITFIELD_RO only supports the GET/,
      );
    });

    it("keeps the key's TTL and refuses bad types, offsets and other value types", async () => {
      await bf("h", "INCRBY", "u16", "#0", 1);
      await redis.call("EXPIRE", "h", 100);
      await bf("h", "INCRBY", "u16", "#0", 1);
      assert.ok(((await redis.call("TTL", "h")) as number) > 90);
      await assert.rejects(bf("h", "GET", "u64", 0), /Invalid bitfield type/);
      await assert.rejects(bf("h", "GET", "x8", 0), /Invalid bitfield type/);
      await assert.rejects(bf("h", "GET", "u8", -1), /bit offset is not an integer or out of range/);
      await assert.rejects(bf("h", "OVERFLOW", "MAYBE", "GET", "u8", 0), /Invalid OVERFLOW type/);
      await redis.call("LPUSH", "list", "x");
      await assert.rejects(bf("list", "GET", "u8", 0), /WRONGTYPE/);
      assert.deepEqual(await bf("h", "GET", "u16", "#0"), [2], "nothing changed by the refused calls");
    });
  });
}
