import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  isJSONRPCErrorResponse,
  isJSONRPCResultResponse,
  type JSONRPCErrorResponse,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type JSONRPCResultResponse,
  type MessageExtraInfo,
} from "@modelcontextprotocol/sdk/types.js";

export type JsonRpcAnswer = JSONRPCResultResponse | JSONRPCErrorResponse;

/**
 * A transport that hands the server one request at a time and gives back its answer: what the
 * direct path (direct.ts) needs to run the SDK's own request handling (method dispatch, argument
 * validation, error shapes) without an HTTP transport or a session. One server and one of these
 * serve every request of the isolate, so each request gets an id of its own here (clients number
 * their requests from 0 alike) and its answer carries the client's id back.
 */
export class DirectTransport implements Transport {
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  readonly #waiting = new Map<number, (answer: JsonRpcAnswer) => void>();
  #lastId = 0;

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.onclose?.();
  }

  /** Only answers leave: a one-shot JSON answer has no stream for progress or logging notifications. */
  async send(message: JSONRPCMessage): Promise<void> {
    if (!isJSONRPCResultResponse(message) && !isJSONRPCErrorResponse(message)) return;
    if (typeof message.id !== "number") return;
    const deliver = this.#waiting.get(message.id);
    this.#waiting.delete(message.id);
    deliver?.(message);
  }

  answer(request: JSONRPCRequest, authInfo: AuthInfo): Promise<JsonRpcAnswer> {
    this.#lastId += 1;
    const id = this.#lastId;
    return new Promise((resolve) => {
      this.#waiting.set(id, (answer) => resolve({ ...answer, id: request.id }));
      this.onmessage?.({ ...request, id }, { authInfo });
    });
  }
}
