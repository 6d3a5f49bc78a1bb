import { join } from 'node:path';
import { freePort } from './free-port';

/**
 * Real MCP servers from their npm packages (devDependencies), for the MCP tests: nobody here wrote
 * them. Run with the pinned Bun (which runs their Node entry points), over stdio (a command for
 * Parley to start) or HTTP (a process started here, on a free loopback port).
 */
const ROOT = join(import.meta.dir, '..', '..');
export const BUN = join(ROOT, 'node_modules', '.bin', 'bun');
const pkg = (name: string) => join(ROOT, 'node_modules', '@modelcontextprotocol', name, 'dist', 'index.js');

/** The command a stdio server row holds. */
export const everythingStdio = (): string[] => [BUN, pkg('server-everything'), 'stdio'];
export const filesystemStdio = (dir: string): string[] => [BUN, pkg('server-filesystem'), dir];
export const memoryStdio = (): string[] => [BUN, pkg('server-memory')];

export interface RunningServer {
  url: string;
  pid: number;
  stop(): void;
}

/** server-everything over streamable HTTP (`/mcp`) or the older HTTP+SSE transport (`/sse`). */
export async function startEverythingHttp(mode: 'streamableHttp' | 'sse' = 'streamableHttp'): Promise<RunningServer> {
  const port = await freePort();
  const proc = Bun.spawn([BUN, pkg('server-everything'), mode], { env: { PATH: process.env.PATH ?? '', PORT: String(port) }, stdout: 'ignore', stderr: 'pipe' });
  const url = `http://127.0.0.1:${port}${mode === 'sse' ? '/sse' : '/mcp'}`;
  const until = Date.now() + 15_000;
  for (;;) {
    try {
      await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(500) });
      break;
    } catch {
      if (Date.now() > until) {
        proc.kill();
        throw new Error(`server-everything (${mode}) did not start on port ${port}`);
      }
      await Bun.sleep(100);
    }
  }
  return { url, pid: proc.pid, stop: () => proc.kill() };
}
