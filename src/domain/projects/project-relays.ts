import type { Logger } from 'pino';
import { unseal } from '../../secrets/encryption.ts';
import { DeliveryError } from '../../delivery/smtp-send.ts';
import type { Transport } from '../../delivery/transports.ts';
import type { ProjectCache } from './project-cache.ts';

// A project's own relay (`smtp_url`, docs/projects.md#limits): its mail leaves through it, in relay and
// direct mode alike, a pooled transport per project kept while its URL stays the same. Capture mode
// sends nothing anywhere, whatever a project says.

/** What sealed a project's relay URL (domain/projects/projects.ts seals it). */
export const SMTP_URL_PURPOSE = 'project-smtp-url';

export interface ProjectRelays {
  /** The transport of the project's mail: its own relay when it has one and the install sends, else the install's. */
  transportFor(projectId: string): Promise<Transport>;
  /** Cuts off the sends under way through every project's relay (a worker stopping: Transport.abort); how many. */
  abort(): number;
  close(): void;
}

/** A relay URL that cannot be read (MAILROOM_SECRET changed): every send is deferred, retried as a relay that is down. */
function unreadable(projectId: string): Transport {
  const response = `451 4.3.0 The relay URL of project ${projectId} cannot be read with this MAILROOM_SECRET: set its smtp_url again`;
  return {
    kind: 'relay',
    send: async () => {
      throw new DeliveryError(response, 451);
    },
    abort: () => 0,
    paused: () => undefined,
    close: () => {},
  };
}

/** `relay(url)` makes a relay transport as the install's is made (transports.ts), with its breaker and throttle. */
export function createProjectRelays(
  projects: ProjectCache,
  install: Transport,
  secret: string,
  relay: (smtpUrl: string) => Transport,
  log: Logger,
): ProjectRelays {
  const relays = new Map<string, { sealed: string; transport: Transport }>();
  const open = (projectId: string, sealed: string): Transport => {
    try {
      return relay(unseal(secret, SMTP_URL_PURPOSE, projectId, sealed));
    } catch (error) {
      log.error({ err: error, project: projectId }, 'a project relay URL cannot be read: its mail waits');
      return unreadable(projectId);
    }
  };
  return {
    async transportFor(projectId) {
      if (install.kind === 'capture') return install;
      const sealed = (await projects.find(projectId))?.smtp_url ?? null;
      const kept = relays.get(projectId);
      if (kept && kept.sealed === sealed) return kept.transport;
      // Changed or removed: the old pool is closed (a send cut off with it is retried, as after a lost connection).
      kept?.transport.close();
      relays.delete(projectId);
      if (sealed === null) return install;
      const transport = open(projectId, sealed);
      relays.set(projectId, { sealed, transport });
      return transport;
    },
    abort: () => [...relays.values()].reduce((cut, { transport }) => cut + transport.abort(), 0),
    close() {
      for (const { transport } of relays.values()) transport.close();
      relays.clear();
    },
  };
}
