// Process-tree CPU time and resident memory from /proc (Linux): what a run costs the machine, counted
// the same way for the CLI alone and for each server.
//
// CPU of a tree = utime + stime + cutime + cstime of every live process in it. A child that exited and
// was reaped moves from "live process" into its parent's cutime/cstime, so the sum is continuous across
// a child's exit: the difference of two snapshots is the CPU the tree spent in between (10 ms ticks).
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";

/** Clock ticks per second (USER_HZ). */
export const CLK_TCK = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** The fields of /proc/<pid>/stat after the command name, or null when the process is gone. */
function statFields(pid) {
  let s;
  try {
    s = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // Field 2 (comm) may hold spaces and parentheses: split after the last ')'.
  return s.slice(s.lastIndexOf(")") + 2).split(" ");
}

/** Every live process as { pid, ppid, ticks } (ticks = own + reaped children's CPU). */
function processes() {
  const out = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const f = statFields(name);
    if (!f) continue;
    // f[0] = field 3 (state): ppid is field 4, utime..cstime are fields 14..17.
    const ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    out.push({ pid: Number(name), ppid: Number(f[1]), ticks });
  }
  return out;
}

/** The pids of `root` and all its live descendants. */
export function treePids(root) {
  const all = processes();
  const kids = new Map();
  for (const p of all) {
    if (!kids.has(p.ppid)) kids.set(p.ppid, []);
    kids.get(p.ppid).push(p);
  }
  const out = [];
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop();
    out.push(pid);
    for (const c of kids.get(pid) ?? []) stack.push(c.pid);
  }
  return out;
}

/** CPU seconds spent so far by `root`'s process tree (live processes plus reaped children). */
export function treeCpuSeconds(root) {
  const all = processes();
  const byPid = new Map(all.map((p) => [p.pid, p]));
  let ticks = 0;
  for (const pid of treePids(root)) ticks += byPid.get(pid)?.ticks ?? 0;
  return ticks / CLK_TCK;
}

/** CPU seconds `pid` spent itself (utime + stime, no children), or NaN when it is gone. */
export function ownCpuSeconds(pid) {
  const f = statFields(pid);
  return f ? (Number(f[11]) + Number(f[12])) / CLK_TCK : NaN;
}

/** CPU seconds of this process's reaped children (what `getrusage(RUSAGE_CHILDREN)` reports). */
export function reapedChildrenCpuSeconds() {
  const f = statFields("self");
  return (Number(f[13]) + Number(f[14])) / CLK_TCK;
}

/** The live descendants of `root` (not `root` itself) whose command line matches `re`. */
export function descendantsMatching(root, re) {
  return treePids(root)
    .filter((pid) => pid !== root)
    .filter((pid) => re.test(cmdline(pid).join(" ")));
}

/** The argv of `pid` ([] when gone). */
export function cmdline(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter((s) => s !== "");
  } catch {
    return [];
  }
}

/** The environment of `pid` as an object ({} when gone or unreadable). */
export function environ(pid) {
  try {
    const env = {};
    for (const kv of readFileSync(`/proc/${pid}/environ`, "utf8").split("\0")) {
      const i = kv.indexOf("=");
      if (i > 0) env[kv.slice(0, i)] = kv.slice(i + 1);
    }
    return env;
  } catch {
    return {};
  }
}

/** Resident memory of `pid` in MB (VmRSS), or null when gone. */
export function rssMb(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** The 1-minute load average. */
export function loadAverage() {
  try {
    return Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0]);
  } catch {
    return NaN;
  }
}
