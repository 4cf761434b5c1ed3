// A PostgreSQL cluster of a test's own, to restart, stop and kill as an operator (or a crash) would:
// initdb into a temporary directory as the `postgres` user, on a free port of 127.0.0.1.
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { promisify } from 'node:util';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './harness.ts';

export interface PostgresCluster {
  /** postgres://postgres@127.0.0.1:<port>/postgres (trust on the loopback address). */
  url: string;
  port: number;
  /** `pg_ctl restart -m fast`. */
  restart(): Promise<void>;
  /** `pg_ctl stop -m <mode>`: fast (an operator's stop) or immediate (the database's own crash). */
  stop(mode: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  /** Sends `signal` to the server and every process it started: SIGSTOP makes a server that hangs, SIGCONT wakes it. */
  signal(signal: 'SIGSTOP' | 'SIGCONT'): Promise<void>;
  /** Terminates every backend but the caller's (pg_terminate_backend); resolves how many. */
  terminateBackends(): Promise<number>;
  /** Runs `sql` on a connection of its own. */
  query(sql: string): Promise<pg.QueryResult>;
  /** CPU the server has used so far, in ms: its processes', those that exited included. */
  cpuMs(): number;
  /** Stops the cluster and deletes its directory. */
  destroy(): Promise<void>;
}

/** Where Debian keeps PostgreSQL's server binaries, newest first; initdb on the PATH also does. */
function binDir(): string | undefined {
  const onPath = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout.trim();
  if (onPath) return join(onPath, '..');
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  return versions.map((v) => join(root, v, 'bin')).find((dir) => existsSync(join(dir, 'initdb')));
}

/** Why a cluster of a test's own cannot be made here, or undefined when it can. */
export function clusterUnavailable(): string | undefined {
  if (!binDir()) return 'no initdb here (install postgresql)';
  if (userInfo().uid === 0 && spawnSync('id', ['postgres']).status !== 0) return 'running as root and there is no postgres user for initdb';
  return undefined;
}

const execFileAsync = promisify(execFile);

/**
 * Runs a PostgreSQL binary, as the postgres user when this process is root (initdb refuses root), off
 * the event loop: the test's clients and SMTP sink keep running meanwhile.
 */
async function run(bin: string, tool: string, args: string[]): Promise<void> {
  const path = join(bin, tool);
  const [command, argv] = userInfo().uid === 0 ? ['runuser', ['-u', 'postgres', '--', path, ...args]] : [path, args];
  await execFileAsync(command, argv, { encoding: 'utf8' });
}

/** The server's process and those it started (their parent's id read from /proc). */
function serverProcesses(data: string): number[] {
  const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        // The parent's id is the 4th field, after the name in parentheses (which may hold spaces).
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster;
      } catch {
        return false;
      }
    })
    .map(Number);
  return [postmaster, ...children];
}

/** utime, stime, cutime and cstime of a process, in clock ticks (/proc/<pid>/stat). */
function cpuTicks(pid: number): number[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ').slice(11, 15).map(Number);
}

/**
 * The server's CPU in ms: each live process's own time, and the postmaster's count of the children it
 * reaped (backends closed since), which /proc keeps in its cutime and cstime.
 */
function serverCpuMs(data: string): number {
  const [postmaster, ...children] = serverProcesses(data);
  let ticks = cpuTicks(postmaster!).reduce((a, b) => a + b);
  for (const pid of children) {
    try {
      const [utime, stime] = cpuTicks(pid);
      ticks += utime! + stime!;
    } catch {
      // Exited meanwhile: the postmaster counts it once reaped.
    }
  }
  return ticks * 10; // 100 ticks a second on Linux
}

export async function startPostgresCluster(): Promise<PostgresCluster> {
  const bin = binDir()!;
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-pg-'));
  if (userInfo().uid === 0) {
    const ids = execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim();
    const gid = execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim();
    chownSync(dir, Number(ids), Number(gid));
  }
  const data = join(dir, 'data');
  const port = await freePort();
  await run(bin, 'initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  // fsync off: a test has no power cut to survive, and a process crash keeps what was written to the OS.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`;
  const pgCtl = (...args: string[]) => run(bin, 'pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-w', '-t', '60', ...args]);
  await pgCtl('-o', options, 'start');
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const query = async (sql: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return await client.query(sql);
    } finally {
      await client.end();
    }
  };
  return {
    url,
    port,
    restart: () => pgCtl('-o', options, '-m', 'fast', 'restart'),
    stop: (mode) => pgCtl('-m', mode, 'stop'),
    start: () => pgCtl('-o', options, 'start'),
    async signal(signal) {
      for (const pid of serverProcesses(data)) {
        try {
          process.kill(pid, signal);
        } catch {
          // Gone meanwhile.
        }
      }
    },
    async terminateBackends() {
      const result = await query('select pg_terminate_backend(pid) from pg_stat_activity where pid <> pg_backend_pid() and backend_type = \'client backend\'');
      return result.rowCount ?? 0;
    },
    query,
    cpuMs: () => serverCpuMs(data),
    async destroy() {
      await pgCtl('-m', 'immediate', 'stop').catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
