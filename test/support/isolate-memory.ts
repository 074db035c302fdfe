// The memory of one V8 isolate inside workerd, read through its inspector (the DevTools protocol), so a
// test can tell what the Worker itself holds from what workerd's resident memory holds. Locally
// workerd's process also hosts Miniflare's simulators (R2, D1, the cache), each an isolate of its
// own, plus their native buffers and the allocator's retained pages: its RSS is not the Worker's.
// `Runtime.getHeapUsage` answers per isolate: the JavaScript heap (usedSize) and the ArrayBuffers'
// backing stores (backingStorageSize), which is where a request's or an R2 object's bytes would live
// if the Worker read them into memory. The Worker's Durable Objects share its isolate.
import WebSocket from "ws";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What `Runtime.getHeapUsage` answers (the last two since V8 12; absent on older runtimes). */
export interface HeapUsage {
  usedSize: number;
  totalSize: number;
  embedderHeapUsedSize?: number;
  backingStorageSize?: number;
}

interface Target {
  title?: string;
  webSocketDebuggerUrl?: string;
}

interface Reply {
  id?: number;
  result?: unknown;
  error?: unknown;
}

/** The isolate of the stack's own Worker, as Miniflare names it to the inspector. */
export const WORKER_ISOLATE = /worker core:user:switchboard$/;
/** Miniflare's R2 simulator (the bucket's Durable Object), for comparison. */
export const R2_SIMULATOR_ISOLATE = /worker r2:bucket$/;

/** A minimal DevTools-protocol client on one isolate. */
export class IsolateInspector {
  private nextId = 0;
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();

  private constructor(private readonly socket: WebSocket) {
    socket.on("message", (data) => {
      const reply = JSON.parse(String(data)) as Reply;
      const waiter = reply.id === undefined ? undefined : this.pending.get(reply.id);
      if (!waiter || reply.id === undefined) return;
      this.pending.delete(reply.id);
      if (reply.error) waiter.reject(new Error(JSON.stringify(reply.error)));
      else waiter.resolve(reply.result);
    });
  }

  /** Attaches to the isolate on workerd's inspector `port` whose title matches `title`. */
  static async connect(port: number, title: RegExp): Promise<IsolateInspector> {
    const targets = (await (await fetch(`http://127.0.0.1:${port}/json`)).json()) as Target[];
    const url = targets.find((target) => title.test(target.title ?? ""))?.webSocketDebuggerUrl;
    if (!url) {
      const titles = targets.map((target) => target.title).join(", ");
      throw new Error(`no inspector target ${title} on ${port} (${titles})`);
    }
    const socket = new WebSocket(url);
    await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
    return new IsolateInspector(socket);
  }

  send<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    return new Promise((resolve, reject) => {
      const id = ++this.nextId;
      this.pending.set(id, { resolve: (value) => resolve(value as T), reject });
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }

  heapUsage(): Promise<HeapUsage> {
    return this.send<HeapUsage>("Runtime.getHeapUsage");
  }

  /**
   * A full collection. workerd runs it when the isolate is next entered, so `wake` sends it requests
   * until it has (an idle isolate would leave the command pending, and one request may be served
   * before the command arrives).
   */
  async collectGarbage(wake: () => Promise<unknown>): Promise<void> {
    await this.send("HeapProfiler.enable");
    let done = false;
    const collected = this.send("HeapProfiler.collectGarbage").then(() => {
      done = true;
    });
    while (!done) await Promise.race([collected, wake().then(() => sleep(50))]);
  }

  close(): void {
    this.socket.close();
  }
}

/** An isolate's bytes held: its JavaScript heap plus its ArrayBuffers' backing stores. */
export const heldBytes = (usage: HeapUsage): number => usage.usedSize + (usage.backingStorageSize ?? 0);

export interface IsolateGrowth {
  /** The largest growth of heap + backing stores over the start, sampled every `everyMs`. */
  held: number;
  heap: number;
  backing: number;
  samples: number;
}

/**
 * Samples the isolates' heap usage until `stop()`, which answers each one's largest growth. The
 * isolates in `collect` are first garbage-collected, so their start is what they really hold (`wake`
 * must send each of them a request; the others start as they are). Sampling is sequential: the next
 * one starts `everyMs` after the previous answer.
 */
export async function watchIsolates<K extends string>(
  inspectors: Record<K, IsolateInspector>,
  { collect, wake, everyMs = 100 }: { collect: NoInfer<K>[]; wake: () => Promise<unknown>; everyMs?: number },
): Promise<{ stop(): Promise<Record<K, IsolateGrowth>> }> {
  const entries = Object.entries(inspectors) as Array<[K, IsolateInspector]>;
  for (const name of collect) await inspectors[name].collectGarbage(wake);
  const start = new Map<K, HeapUsage>();
  const growth = new Map<K, IsolateGrowth>();
  for (const [name, inspector] of entries) {
    const usage = await inspector.heapUsage();
    // Without it the ArrayBuffers (where a buffered body would be) go unseen: no measure at all.
    if (usage.backingStorageSize === undefined) throw new Error("this runtime reports no backing stores");
    start.set(name, usage);
    growth.set(name, { held: 0, heap: 0, backing: 0, samples: 0 });
  }
  const sample = async (): Promise<void> => {
    for (const [name, inspector] of entries) {
      const now = await inspector.heapUsage();
      const base = start.get(name);
      const peak = growth.get(name);
      if (!base || !peak) continue;
      peak.held = Math.max(peak.held, heldBytes(now) - heldBytes(base));
      peak.heap = Math.max(peak.heap, now.usedSize - base.usedSize);
      peak.backing = Math.max(peak.backing, (now.backingStorageSize ?? 0) - (base.backingStorageSize ?? 0));
      peak.samples++;
    }
  };
  let running = true;
  const loop = (async () => {
    while (running) {
      await sample();
      await sleep(everyMs);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      await sample();
      return Object.fromEntries(growth) as Record<K, IsolateGrowth>;
    },
  };
}
