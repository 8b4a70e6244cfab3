/**
 * BullMQ bulk push: time Queue.addBulk of N jobs, in chunks of 1,000 sent
 * concurrently (BullMQ pipelines each chunk).
 *
 *   --url redis://...  --jobs N
 */
import { Queue } from "bullmq";
import { adminConnection, connection, main, round, rssMB, serverCommands } from "./bullmq-common.mjs";

main(async (a) => {
  const jobs = Number(a.jobs ?? 100_000);
  const admin = adminConnection(a.url);
  const queue = new Queue("bench", { connection: connection(a.url) });
  const opts = { removeOnComplete: true, removeOnFail: true };
  const chunks = [];
  for (let i = 0; i < jobs; i += 1000) {
    chunks.push(
      Array.from({ length: Math.min(1000, jobs - i) }, (_, j) => ({ name: "noop", data: { i: i + j }, opts })),
    );
  }
  // Warm up (untimed), then empty the queue.
  await queue.addBulk(chunks[0].slice(0, 100));
  await queue.obliterate({ force: true });

  const before = await serverCommands(admin);
  const t0 = performance.now();
  await Promise.all(chunks.map((chunk) => queue.addBulk(chunk)));
  const seconds = (performance.now() - t0) / 1000;
  const serverCmds = (await serverCommands(admin)) - before - 1;
  const waiting = await queue.getWaitingCount();
  await queue.close();
  admin.disconnect();
  if (waiting !== jobs) throw new Error(`pushed ${waiting} jobs, expected ${jobs}`);
  return {
    jobs,
    jobsPerSec: round(jobs / seconds, 0),
    seconds: round(seconds, 3),
    rssMB: rssMB(),
    roundTripsPerJob: null,
    serverCommandsPerJob: round(serverCmds / jobs, 3),
  };
});
