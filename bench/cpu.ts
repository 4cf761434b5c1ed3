import { readFileSync } from 'node:fs';

const TICKS_PER_SECOND = 100;

/** CPU time a process has used so far, every thread included, in milliseconds (Linux: /proc/<pid>/stat). */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [utime, stime] = [Number(fields[11]), Number(fields[12])];
  return ((utime + stime) * 1000) / TICKS_PER_SECOND;
}
