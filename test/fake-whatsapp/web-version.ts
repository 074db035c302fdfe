/**
 * web.whatsapp.com's service worker (`/sw.js`) as WhatsApp serves it: the current WhatsApp Web build
 * as `"client_revision":<n>` inside a large script. The bridge reads the current version from it
 * (WA_VERSION_URL); a test changes the revision as WhatsApp ships, or stops the host to be offline.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export type Version = readonly [number, number, number];

/** Whether `version` is older than `minimum` (WhatsApp refuses those with 405). */
export const isOlder = (version: Version, minimum: Version): boolean => {
  for (let i = 0; i < 3; i++) if (version[i] !== minimum[i]) return (version[i] ?? 0) < (minimum[i] ?? 0);
  return false;
};

export class WebVersionHost {
  /** Requests for sw.js answered so far. */
  hits = 0;

  private constructor(
    private readonly server: Server,
    private revision: number,
  ) {
    server.on("request", (request, response) => {
      if (request.url !== "/sw.js") {
        response.writeHead(404).end();
        return;
      }
      this.hits++;
      response.writeHead(200, { "content-type": "application/javascript" });
      // The real file is minified JavaScript with the build's config inlined as escaped JSON.
      response.end(
        `self.__SW_CONFIG=JSON.parse("{\\"version\\":\\"1\\",\\"client_revision\\":${this.revision},\\"x\\":1}");`,
      );
    });
  }

  static async start(revision: number): Promise<WebVersionHost> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return new WebVersionHost(server, revision);
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/sw.js`;
  }

  /** WhatsApp shipped a new build. */
  ship(revision: number): void {
    this.revision = revision;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
