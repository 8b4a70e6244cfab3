/**
 * A post-mortem from the AOF: Redis 7 writes the effects of every script
 * (RPOP, HSET, HDEL...) to it in order, so the last write that held a lost
 * job says where it went. Used when a scenario with AOF loses a job.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";

/** Parses the AOF's incremental files (RESP arrays) into commands. */
function readAof(dir: string): Buffer[][] {
  const aofDir = `${dir}/appendonlydir`;
  if (!existsSync(aofDir)) return [];
  const files = readdirSync(aofDir).filter((f) => f.endsWith(".incr.aof")).sort();
  const commands: Buffer[][] = [];
  for (const file of files) {
    const data = readFileSync(`${aofDir}/${file}`);
    let i = 0;
    while (i < data.length && data[i] === 0x2a) {
      let j = data.indexOf("\r\n", i);
      const n = Number(data.subarray(i + 1, j));
      i = j + 2;
      const args: Buffer[] = [];
      for (let a = 0; a < n; a++) {
        j = data.indexOf("\r\n", i);
        const len = Number(data.subarray(i + 1, j));
        i = j + 2;
        args.push(data.subarray(i, i + len));
        i += len + 2;
      }
      commands.push(args);
    }
  }
  return commands;
}

const short = (b: Buffer) => (b.length > 60 ? `<${b.length} bytes>` : b.toString());

/**
 * For each lost jid: the last write that carried it, and, if that was a
 * held-hash HSET, whether the same field was written again before any HDEL
 * (a second run of the same fetch request, which replaced the batch).
 */
export function explainLoss(dir: string, jids: string[]): string[] {
  const commands = readAof(dir);
  if (commands.length === 0) return [];
  const out: string[] = [];
  for (const jid of jids) {
    const needle = Buffer.from(`"jid":"${jid}"`);
    let last = -1;
    for (let k = 0; k < commands.length; k++) if (commands[k].some((a) => a.includes(needle))) last = k;
    if (last < 0) {
      out.push(`${jid}: never written to Redis (AOF)`);
      continue;
    }
    const c = commands[last];
    let line = `${jid}: last written by AOF command #${last} ${c.slice(0, 3).map(short).join(" ")}`;
    if (c[0].toString() === "HSET" && c[1].toString().includes(":held:")) {
      const key = c[1].toString();
      const field = c[2].toString();
      for (let k = last + 1; k < commands.length; k++) {
        const d = commands[k];
        if (d[1]?.toString() !== key || d[2]?.toString() !== field) continue;
        const op = d[0].toString();
        if (op === "HSET") line += `; field ${field} overwritten by #${k} (the same fetch ran again) before any HDEL`;
        else line += `; then #${k} ${op}`;
        break;
      }
    }
    out.push(line);
  }
  return out;
}
