import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ChurningMap, ChurningSet } from "../src/server/churning_map.ts";

describe("ChurningMap and ChurningSet", () => {
  it("behave as a Map and a Set through thousands of insertions and deletions (built anew along the way)", () => {
    const map = new ChurningMap<number, string>();
    const set = new ChurningSet<number>();
    const plainMap = new Map<number, string>();
    const plainSet = new Set<number>();
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 5000; i++) {
      const key = Math.floor(random() * 40);
      if (random() < 0.5) {
        map.set(key, `v${i}`);
        plainMap.set(key, `v${i}`);
        set.add(key);
        plainSet.add(key);
      } else {
        assert.equal(map.delete(key), plainMap.delete(key));
        assert.equal(set.delete(key), plainSet.delete(key));
      }
      assert.equal(map.size, plainMap.size);
      assert.equal(set.size, plainSet.size);
    }
    // Same entries, in the same (insertion) order.
    assert.deepEqual([...map], [...plainMap]);
    assert.deepEqual([...map.keys()], [...plainMap.keys()]);
    assert.deepEqual([...map.values()], [...plainMap.values()]);
    assert.deepEqual([...set], [...plainSet]);
    for (const key of plainMap.keys()) assert.equal(map.get(key), plainMap.get(key));
    const seen: Array<[number, string]> = [];
    map.forEach((value, key, self) => {
      assert.equal(self, map);
      seen.push([key, value]);
    });
    assert.deepEqual(seen, [...plainMap]);
    map.clear();
    set.clear();
    assert.equal(map.size + set.size, 0);
    assert.equal(map.has(1) || set.has(1), false);
  });

  it("never builds itself anew under an iteration that deletes", () => {
    const map = new ChurningMap<number, number>();
    for (let i = 0; i < 600; i++) map.set(i, i);
    const visited: number[] = [];
    for (const [key] of map) {
      visited.push(key);
      map.delete(key); // 600 deletions: past the renewal count, mid-iteration
    }
    assert.equal(visited.length, 600);
    assert.equal(map.size, 0);
  });
});
