import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { toTransportError } from "../src/transport/transport_error.ts";

describe("toTransportError", () => {
  const cases: Array<[string, string]> = [
    ["NOSCRIPT No matching script. Please use EVAL.", "noscript"],
    ["WRONGTYPE Operation against a key holding the wrong kind of value", "wrongtype"],
    ["READONLY You can't write against a read only replica.", "readonly"],
    ["LOADING Redis is loading the dataset in memory", "readonly"],
    ["OOM command not allowed when used memory > 'maxmemory'.", "oom"],
    ["connect ECONNREFUSED 127.0.0.1:6390", "connection"],
    ["Connection is closed.", "connection"],
    // ioredis's words for a MULTI cut off by a dropped connection: its outcome is unknown.
    ["Command aborted due to connection close", "connection"],
    ["ERR unknown command 'FOO'", "command"],
  ];
  for (const [message, kind] of cases) {
    it(`classifies "${message}" as ${kind}`, () => {
      const error = toTransportError(new Error(message));
      assert.equal(error.kind, kind);
      assert.equal(error.maybeApplied, kind === "connection", "a connection error may have been applied");
    });
  }

  it("says plainly that Redis is out of memory", () => {
    assert.match(toTransportError(new Error("OOM command not allowed")).message, /Redis is out of memory/);
  });
});
