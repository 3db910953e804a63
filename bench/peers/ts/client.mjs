// The benchmark's client on @modelcontextprotocol/sdk: one Client shared
// by all workers (StdioClientTransport or StreamableHTTPClientTransport),
// measured the way bench/loadgen's harness measures the Go clients, and
// writing the same result line. The SDK speaks the legacy era only.
//
//   node client.mjs -stdio CMD | -url URL  [-era legacy] [-duration 3s] ...
import fs from 'node:fs';
import os from 'node:os';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const flags = {
  impl: 'ts', stdio: '', url: '', era: 'legacy', peer: 'raw', suite: 'clients', out: '', 'run-id': process.env.BENCH_RUN_ID || '',
  'server-pid': '0', warmup: '500ms', duration: '3s', 'call-timeout': '10s', conc: '1,16', payloads: 'small,large',
  'small-bytes': '20', 'large-bytes': '65536', open: '0',
};
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const k = argv[i].replace(/^--?/, '');
  if (!(k in flags)) { console.error(`unknown flag ${argv[i]}`); process.exit(2); }
  flags[k] = argv[++i];
}
const ms = (d) => { const m = /^([\d.]+)(ms|s)$/.exec(d); if (!m) throw new Error(`bad duration ${d}`); return Number(m[1]) * (m[2] === 's' ? 1000 : 1); };

const statTicks = (pid) => {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10000; // µs (USER_HZ 100)
  } catch { return 0; }
};
const machineBusy = () => {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return f.reduce((sum, v, i) => (i === 3 || i === 4 || i >= 8 ? sum : sum + v), 0) * 10000;
};
const selfCPU = () => { const u = process.cpuUsage(); return u.user + u.system; };
const peakRSS = (pid) => { const m = /VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8')); return m ? Number(m[1]) : 0; };
const round = (v, d) => Math.round(v * 10 ** d) / 10 ** d;

const FILLER = 'abcdefghijklmnopqrstuvwxyz0123456789';
// Each call's message is unique: "wWWsSSSSSSSSSS-" then filler, as in the Go harness.
const message = (w, seq, n) => {
  const head = `w${String(w % 100).padStart(2, '0')}s${String(seq % 1e10).padStart(10, '0')}-`;
  let tail = '';
  for (let i = 15; i < Math.max(n, 16); i++) tail += FILLER[i % FILLER.length];
  return head + tail;
};

const transportName = flags.stdio ? 'stdio' : 'http';
const result = {
  schema: 2, ts: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), run_id: flags['run-id'], suite: flags.suite,
  role: 'client', impl: 'ts', peer: flags.peer, era: flags.era, transport: transportName,
  target: flags.stdio || flags.url, peak_rss_kb: 0, rss_of: 'client', phases: [], errors: 0, mismatches: 0, verified: 0,
  host: { num_cpu: os.cpus().length, gomaxprocs: 0, runtime: `node ${process.version}`, driver: 'ts-client' },
};
const write = () => {
  const line = JSON.stringify(result) + '\n';
  if (flags.out) fs.appendFileSync(flags.out, line); else process.stdout.write(line);
};
if (flags.era !== 'legacy') {
  result.fatal = `the TypeScript SDK does not speak ${flags.era}`;
  result.errors = 1;
  write();
  process.exit(1);
}

let transport;
if (flags.stdio) transport = new StdioClientTransport({ command: 'sh', args: ['-c', `exec ${flags.stdio}`], stderr: 'inherit' });
else transport = new StreamableHTTPClientTransport(new URL(flags.url));
const client = new Client({ name: 'bench-ts-client', version: '0' });
const t0 = performance.now();
try {
  await client.connect(transport);
} catch (e) {
  result.fatal = `connect: ${e.message}`;
  result.errors = 1;
  write();
  process.exit(1);
}
result.connect_ms = round(performance.now() - t0, 2);
result.protocol_version = transport._protocolVersion || client.getServerVersion?.()?.version || '';
const serverPid = Number(flags['server-pid']) || (flags.stdio ? transport.pid : 0);
const timeout = ms(flags['call-timeout']);

let seq = 0;
async function callOnce(w, n) {
  const msg = message(w, ++seq, n);
  const res = await client.callTool({ name: 'echo', arguments: { message: msg } }, undefined, { timeout });
  if (res.isError || !res.content?.length) throw new Error(`bad tool result (isError=${res.isError})`);
  if (res.content[0].type !== 'text' || res.content[0].text !== msg) {
    const e = new Error('echo mismatch'); e.mismatch = true; throw e;
  }
}

async function phase(conc, payload, bytes) {
  const p = { conc, payload, payload_bytes: bytes, mode: 'closed', warmup_calls: 0, calls: 0, errors: 0, mismatches: 0, verified: 0 };
  const drive = async (untilMs, lat) => {
    let calls = 0;
    await Promise.all(Array.from({ length: conc }, async (_, w) => {
      while (performance.now() < untilMs) {
        const s = performance.now();
        calls++;
        try {
          await callOnce(w, bytes);
          if (lat) lat.push(performance.now() - s);
        } catch (e) {
          if (!lat) continue;
          p.errors++;
          if (e.mismatch) p.mismatches++;
          p.first_error ??= e.message;
        }
      }
    }));
    return calls;
  };
  p.warmup_calls = await drive(performance.now() + ms(flags.warmup), null);
  const lat = [];
  const c0 = selfCPU(), s0 = serverPid ? statTicks(serverPid) : 0, b0 = machineBusy(), start = performance.now();
  p.calls = await drive(start + ms(flags.duration), lat);
  const elapsed = (performance.now() - start) / 1000;
  const cpu = selfCPU() - c0, srv = serverPid ? statTicks(serverPid) - s0 : 0, busy = machineBusy() - b0;
  lat.sort((a, b) => a - b);
  const q = (f) => (lat.length ? round(lat[Math.min(lat.length - 1, Math.max(0, Math.round(f * lat.length) - 1))] * 1000, 1) : 0);
  Object.assign(p, {
    verified: lat.length, duration_s: round(elapsed, 3), calls_per_s: round(lat.length / elapsed, 1),
    p50_us: q(0.5), p90_us: q(0.9), p99_us: q(0.99), p999_us: q(0.999), max_us: q(1),
    driver_cpu_us_per_call: p.calls ? round(cpu / p.calls, 2) : 0,
    server_cpu_us_per_call: p.calls && serverPid ? round(srv / p.calls, 2) : 0,
    other_cpu_pct: round((100 * Math.max(busy - cpu - srv, 0)) / (elapsed * 1e6), 1),
  });
  return p;
}

const sizes = { small: Number(flags['small-bytes']), large: Number(flags['large-bytes']) };
for (const payload of flags.payloads.split(',')) {
  for (const conc of flags.conc.split(',').map(Number)) {
    result.phases.push(await phase(conc, payload, sizes[payload]));
  }
}
result.peak_rss_kb = peakRSS(process.pid);
for (const p of result.phases) { result.errors += p.errors; result.mismatches += p.mismatches; result.verified += p.verified; }
await client.close();
write();
process.exit(0);
