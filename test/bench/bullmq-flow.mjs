/**
 * BullMQ flows: FlowProducer.addBulk of P parents with C children each (in
 * chunks of 100 flows), timed; then one Worker (concurrency N) processes
 * every child and every parent (each parent reads getChildrenValues()),
 * timed until the last parent completed.
 *
 *   --url redis://...  --parents P  --children C  --concurrency N
 */
import { FlowProducer, Queue, Worker } from "bullmq";
import { adminConnection, connection, main, round, rssMB, serverCommands } from "./bullmq-common.mjs";

main(async (a) => {
  const parents = Number(a.parents ?? 10_000);
  const children = Number(a.children ?? 10);
  const concurrency = Number(a.concurrency ?? 50);
  const conn = connection(a.url);
  const admin = adminConnection(a.url);
  const flows = new FlowProducer({ connection: conn });
  const before = await serverCommands(admin);
  const t0 = performance.now();
  for (let p = 0; p < parents; p += 100) {
    const n = Math.min(100, parents - p);
    await flows.addBulk(Array.from({ length: n }, (_, i) => ({
      name: "parent",
      queueName: "flows",
      data: { p: p + i },
      opts: { removeOnComplete: true },
      children: Array.from({ length: children }, (_, c) => ({ name: "child", queueName: "flows", data: { c } })),
    })));
  }
  const created = (performance.now() - t0) / 1000;
  let done = 0;
  let sum = 0;
  let finished;
  const allDone = new Promise((resolve) => (finished = resolve));
  const t1 = performance.now();
  const worker = new Worker(
    "flows",
    async (job) => {
      if (job.name === "child") return job.data.c;
      const values = await job.getChildrenValues();
      for (const v of Object.values(values)) sum += v;
      return null;
    },
    { connection: conn, concurrency },
  );
  worker.on("completed", (job) => {
    if (job.name === "parent" && ++done === parents) finished();
  });
  worker.on("error", (error) => process.stderr.write(`worker error: ${error}\n`));
  await allDone;
  const processed = (performance.now() - t1) / 1000;
  const rss = rssMB();
  await worker.close();
  const serverCmds = (await serverCommands(admin)) - before - 1;
  await flows.close();
  await new Queue("flows", { connection: conn }).close();
  admin.disconnect();
  const expected = parents * (children * (children - 1)) / 2;
  if (sum !== expected) throw new Error(`parents read ${sum} from their children, expected ${expected}`);
  const jobs = parents * (children + 1);
  return {
    parents,
    children,
    createSeconds: round(created, 2),
    processSeconds: round(processed, 2),
    jobsPerSec: round(jobs / (created + processed), 0),
    processJobsPerSec: round(jobs / processed, 0),
    serverCommandsPerJob: round(serverCmds / jobs, 2),
    rssMB: rss,
  };
});
