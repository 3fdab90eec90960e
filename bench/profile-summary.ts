// Summarizes a V8 .cpuprofile (from `node --cpu-prof`): self time by function and by module.
//   node --import tsx bench/profile-summary.ts FILE.cpuprofile|DIR [--top 30] [--inclusive REGEX]
// A directory (one server process under --cpu-prof) holds a profile per thread; the main
// thread's is the one with the most busy time, and only that one is summarized.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: Node[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const root = resolve(import.meta.dirname, '..');

/** Where code lives: a package, a src/ file, Node's internals, or V8's pseudo-frames. */
export function moduleOf(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native)';
  const path = url.replace(/^file:\/\//, '');
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (nm) return nm[1]!;
  if (path.startsWith('node:')) return path.split('/')[0]!;
  if (path.startsWith(root)) return relative(root, path);
  return path;
}

export function summarize(p: Profile, match: RegExp = /\/(src|dist)\//) {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  // timeDeltas[i] is the gap before samples[i]; sample i lasts until the next one.
  for (let i = 0; i < p.samples.length; i++) {
    const dt = p.timeDeltas[i + 1] ?? 0;
    self.set(p.samples[i]!, (self.get(p.samples[i]!) ?? 0) + dt);
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const fnTime = new Map<string, number>();
  const modTime = new Map<string, number>();
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    const { functionName, url, lineNumber } = n.callFrame;
    const mod = moduleOf(url, functionName);
    const key = `${functionName || '(anonymous)'}  ${url ? `${mod}:${lineNumber + 1}` : ''}`.trim();
    fnTime.set(key, (fnTime.get(key) ?? 0) + us);
    modTime.set(mod, (modTime.get(mod) ?? 0) + us);
  }
  // Inclusive (self + callees) time of the project's own functions, counted once per stack
  // even when a function recurses. Async continuations start new stacks, so an async
  // function's inclusive time is the synchronous work of each of its steps.
  const keyOf = (n: Node) => `${n.callFrame.functionName || '(anonymous)'}  ${moduleOf(n.callFrame.url, n.callFrame.functionName)}:${n.callFrame.lineNumber + 1}`;
  const inclusive = new Map<number, number>();
  const parentOf = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
  const incl = (id: number): number => {
    const known = inclusive.get(id);
    if (known !== undefined) return known;
    const n = byId.get(id)!;
    const v = (self.get(id) ?? 0) + (n.children ?? []).reduce((a, c) => a + incl(c), 0);
    inclusive.set(id, v);
    return v;
  };
  const own = new Map<string, number>();
  for (const n of p.nodes) {
    if (!match.test(n.callFrame.url)) continue;
    const key = keyOf(n);
    let up = parentOf.get(n.id);
    let nested = false;
    while (up !== undefined) {
      if (keyOf(byId.get(up)!) === key) {
        nested = true;
        break;
      }
      up = parentOf.get(up);
    }
    if (!nested) own.set(key, (own.get(key) ?? 0) + incl(n.id));
  }
  const sorted = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1]);
  return { totalMs: total / 1000, functions: sorted(fnTime), modules: sorted(modTime), projectInclusive: sorted(own) };
}

function main(): void {
  const args = process.argv.slice(2);
  const topAt = args.indexOf('--top');
  const top = topAt >= 0 ? Number(args[topAt + 1]) : 30;
  const matchAt = args.indexOf('--inclusive');
  // --inclusive REGEX: the inclusive table for the functions whose file matches (default: the project's own, src/ or dist/).
  const match = matchAt >= 0 ? new RegExp(args[matchAt + 1]!) : undefined;
  const files = args.filter((a, i) => !a.startsWith('--') && (topAt < 0 || i !== topAt + 1) && (matchAt < 0 || i !== matchAt + 1));
  if (files.length === 0) {
    process.stderr.write('usage: node --import tsx bench/profile-summary.ts FILE.cpuprofile [--top N]\n');
    process.exit(64);
  }
  for (const arg of files) {
    const candidates = statSync(arg).isDirectory()
      ? readdirSync(arg).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(arg, f))
      : [arg];
    const busyOf = (x: ReturnType<typeof summarize>) => x.totalMs * 1000 - (x.modules.find(([m]) => m === '(idle)')?.[1] ?? 0);
    const all = candidates.map((file) => ({ file, s: summarize(JSON.parse(readFileSync(file, 'utf8')) as Profile, match) }))
      .sort((a, b) => busyOf(b.s) - busyOf(a.s));
    if (all.length === 0) {
      process.stderr.write(`${arg}: no .cpuprofile\n`);
      continue;
    }
    const { file, s } = all[0]!;
    const busy = busyOf(s);
    const pct = (us: number) => `${((100 * us) / busy).toFixed(1).padStart(5)}%`;
    const ms = (us: number) => `${(us / 1000).toFixed(0).padStart(7)} ms`;
    process.stdout.write(`\n${file}\n  sampled ${s.totalMs.toFixed(0)} ms, of which busy (not idle) ${(busy / 1000).toFixed(0)} ms; percentages are of busy time\n`);
    process.stdout.write('\n  self time by module\n');
    for (const [m, us] of s.modules.filter(([m]) => m !== '(idle)').slice(0, 20)) process.stdout.write(`  ${ms(us)} ${pct(us)}  ${m}\n`);
    process.stdout.write(`\n  top ${top} functions by self time\n`);
    for (const [f, us] of s.functions.filter(([f]) => !f.startsWith('(idle)')).slice(0, top)) process.stdout.write(`  ${ms(us)} ${pct(us)}  ${f}\n`);
    process.stdout.write(`\n  top ${Math.min(top, 20)} project functions by inclusive time (self + what they call synchronously)\n`);
    for (const [f, us] of s.projectInclusive.slice(0, Math.min(top, 20))) process.stdout.write(`  ${ms(us)} ${pct(us)}  ${f}\n`);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) main();
