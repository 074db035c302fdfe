/**
 * The bridge process: `tsx bridge/src/main.ts`. Holds the WhatsApp sockets the edge assigns to it, and
 * nothing else: agent runs go to runners their companies' owners registered (bridge/src/runner/).
 * On SIGTERM/SIGINT it closes WhatsApp WITHOUT logging out (the next bridge reuses the creds) and the
 * fleet link with 1001 so the edge reassigns at once, then exits 0.
 */
import { type BridgeConfig, loadConfig } from "./config.ts";
import type { WhatsAppNetwork } from "./protocol/seam.ts";
import { FleetLink } from "./sessions/fleet-link.ts";
import { installFaultGuard } from "./shared/fault-guard.ts";
import { errorMessage, jsonLog, type Log } from "./shared/log.ts";
import { simulatorNetwork } from "./simulator/simulator.ts";
import { VersionBook } from "./whatsapp/version.ts";

/** A stuck close must not keep an orchestrator waiting: exit anyway after this long. */
const SHUTDOWN_GRACE_MS = 4_000;

/** Warnings and errors until the configuration names LOG_LEVEL (a bad configuration is an error). */
let log: Log = jsonLog();

/** Real WhatsApp: Baileys, and the WhatsApp Web version it announces (read in the background). */
async function baileysFor(config: BridgeConfig): Promise<WhatsAppNetwork> {
  const { baileysNetwork, bundledVersion } = await import("./whatsapp/whatsapp.ts");
  const versions = new VersionBook({
    ...(config.waVersion ? { pinned: config.waVersion } : {}),
    sourceUrl: config.waVersionUrl,
    bundled: bundledVersion(),
    log,
  });
  // Not awaited: a start never waits on the internet; sockets opened before it answers use the
  // edge's last good version or the bundled one, and a 405 reads the source again.
  void versions.refresh({ quiet: true });
  return baileysNetwork({
    log,
    history: config.history,
    versions,
    ...(config.waWebSocketUrl ? { waWebSocketUrl: config.waWebSocketUrl } : {}),
    ...(config.waRootKey ? { rootKey: config.waRootKey } : {}),
    ...(config.waMediaHost ? { mediaHost: config.waMediaHost } : {}),
  });
}

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  log = jsonLog({ level: config.logLevel });
  // A stray rejection or exception in one session's work must not take every session down with it.
  installFaultGuard({ log, secrets: [config.token] });
  // Baileys loads only when it is used: the simulator starts fast and never touches it.
  const network: WhatsAppNetwork = config.simulator
    ? simulatorNetwork({ qrIntervalMs: config.simulatorQrIntervalMs })
    : await baileysFor(config);
  const fleet = new FleetLink({ ...config, network, log });

  let stopping = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log("info", "signal received", { signal });
    setTimeout(() => {
      log("warn", "shutdown grace period over; exiting");
      process.exit(0);
    }, SHUTDOWN_GRACE_MS).unref();
    fleet.shutdown().then(
      () => {
        log("info", "bridge stopped");
        process.exit(0);
      },
      (error: unknown) => {
        log("error", "shutdown failed", { error: errorMessage(error) });
        process.exit(0);
      },
    );
  };
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
  fleet.start();
}

main().catch((error: unknown) => {
  log("error", "bridge failed to start", { error: errorMessage(error) });
  process.exit(1);
});
