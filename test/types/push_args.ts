/**
 * Compile-time checks of push arguments (issue 12), checked by
 * `tsc -p tsconfig.test.json` and never run. Each `@ts-expect-error` line
 * must fail to compile: if one ever compiles, tsc reports the directive as
 * unused and the typecheck fails.
 */
import * as v from "valibot";
import { type AnyJob, type Client, defineJob } from "../../mod.ts";

const HardJob = defineJob({
  name: "HardJob",
  args: v.tuple([v.string(), v.number()]),
  perform(_ctx, _name, _count) {},
});
const Untyped = defineJob({ name: "Untyped", perform(_ctx, _id: number, _note?: string) {} });
/** A schema whose input and output differ: pushes take the input. */
const Parsed = defineJob({
  name: "Parsed",
  args: v.tuple([v.pipe(v.string(), v.transform((s) => Number(s)))]),
  perform(_ctx, n: number) {
    void n;
  },
});

export async function pushTypes(client: Client, any: AnyJob): Promise<void> {
  // Correct calls compile.
  await client.push(HardJob, ["bob", 5]);
  await client.push(HardJob, ["bob", 5] as const, { queue: "critical", in: 60 });
  await client.push(Untyped, [1]);
  await client.push(Untyped, [1, "note"]);
  await client.push(Parsed, ["42"]);
  await client.pushBulk(HardJob, [["a", 1], ["b", 2]]);
  await HardJob.performAsync(client, "bob", 5);
  // A class name stays untyped: another process defines its arguments.
  await client.push("RubyJob", [1, { any: "json" }, null]);
  await client.pushBulk("RubyJob", [[1], ["two", 3]]);
  // A job whose type is erased (a registry's) takes any arguments.
  await client.push(any, ["whatever"]);

  // @ts-expect-error wrong arity: one argument missing
  await client.push(HardJob, ["bob"]);
  // @ts-expect-error wrong arity: one argument too many
  await client.push(HardJob, ["bob", 5, true]);
  // @ts-expect-error wrong type: count must be a number
  await client.push(HardJob, ["bob", "five"]);
  // @ts-expect-error wrong type: the first element must be a string
  await client.push(Untyped, ["1"]);
  // @ts-expect-error the schema's input is a string, not the parsed number
  await client.push(Parsed, [42]);
  // @ts-expect-error wrong type inside a bulk push
  await client.pushBulk(HardJob, [["a", 1], ["b", "2"]]);
  // @ts-expect-error wrong arity inside a bulk push
  await client.pushBulk(HardJob, [["a", 1], ["b"]]);
  // @ts-expect-error args must be an array, even for a class name
  await client.push("RubyJob", "not an array");
}
