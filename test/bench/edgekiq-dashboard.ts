/**
 * What the dashboard costs Redis as the job sets grow: `--phase seed` writes
 * R retries and R dead jobs in Sidekiq's format (so Sidekiq's own Web UI,
 * sidekiq_web.rb, reads the same data); `--phase measure` serves each page
 * through the edgekiq/web app (`app.request`, no HTTP server) and reports,
 * per request, Redis's main-thread CPU, its commands and the wall time.
 *
 *   --url redis://...  --phase seed --retries R
 *   --url redis://...  --phase measure [--requests K]
 */
import { dashboard } from "../../src/web/mod.ts";
import { main, openTransport, redisCostOf, round } from "./child.ts";

/** The first seeded retry: its detail page is one of the pages measured. */
const FIRST = { jid: "0123456789abcdef01234567", score: 4102444800 };

/** A failed job as Sidekiq writes it to `retry` and `dead`. */
function failedJob(i: number, jid: string, failedAt: number): string {
  return JSON.stringify({
    class: "HardJob",
    args: [i, "bench"],
    retry: true,
    queue: "default",
    jid,
    created_at: failedAt - 60,
    enqueued_at: failedAt - 1,
    error_message: `something went wrong with record ${i}`,
    error_class: "RuntimeError",
    failed_at: failedAt - 30,
    retried_at: failedAt,
    retry_count: 3,
  });
}

main(async (a) => {
  const transport = await openTransport("ioredis", a.url);
  if (a.phase === "seed") {
    const retries = Number(a.retries ?? 0);
    const now = Date.now() / 1000;
    const chunk = 1000;
    for (let i = 0; i < retries; i += chunk * 10) {
      const commands: Array<Array<string | number>> = [];
      for (let c = i; c < Math.min(retries, i + chunk * 10); c += chunk) {
        const retry: Array<string | number> = ["ZADD", "retry"];
        const dead: Array<string | number> = ["ZADD", "dead"];
        for (let j = c; j < Math.min(retries, c + chunk); j++) {
          const jid = j === 0 ? FIRST.jid : j.toString(16).padStart(24, "0");
          retry.push(j === 0 ? FIRST.score : FIRST.score + j, failedJob(j, jid, now));
          dead.push(now - j, failedJob(j, jid, now - j));
        }
        commands.push(retry, dead);
      }
      await transport.pipeline(commands as [string, ...Array<string | number>][]);
    }
    await transport.call("SET", "stat:processed", 123_456_789);
    await transport.call("SET", "stat:failed", 1_234_567);
    const sizes = [await transport.call("ZCARD", "retry"), await transport.call("ZCARD", "dead")];
    await transport.close();
    return { retries: sizes[0], dead: sizes[1] };
  }
  const requests = Number(a.requests ?? 10);
  const admin = await openTransport("ioredis", a.url);
  const app = dashboard({ transport, auth: () => true });
  const paths = [
    "/",
    "/stats",
    "/retries",
    "/dead",
    `/retries/${FIRST.score}-${FIRST.jid}`,
    // Linear by design (ZSCAN for a substring, as Sidekiq 7's filter): the one page that is not constant.
    "/retries?substr=no-such-text",
  ];
  const out: Record<string, unknown> = {};
  for (const path of paths) {
    const k = path.includes("substr") ? Math.min(requests, 3) : requests;
    const get = async () => {
      const response = await app.request(`http://bench.local${path}`);
      await response.text();
      if (response.status !== 200 && !(path.startsWith("/retries/") && response.status === 404)) {
        throw new Error(`GET ${path} answered ${response.status}`);
      }
      return response.status;
    };
    await get();
    await get();
    const walls: number[] = [];
    let cpuUs = 0;
    let commands = 0;
    for (let i = 0; i < k; i++) {
      const t0 = performance.now();
      const cost = await redisCostOf(admin, get);
      walls.push(performance.now() - t0);
      cpuUs += cost.cpuUs;
      commands += cost.commands;
    }
    walls.sort((x, y) => x - y);
    out[path] = {
      ms: round(walls[Math.floor(k / 2)], 2),
      redisUs: round(cpuUs / k, 1),
      commands: round(commands / k, 2),
    };
  }
  await Promise.allSettled([transport.close(), admin.close()]);
  return { requests, pages: out };
});
