// Types of the agent-adaptor client. `paths` and `components` are generated from the service's
// OpenAPI document (`npm run generate`); the client adds the run-event follower.
import type { Client } from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type { components, paths };

/** One run event (`seq` is its sequence; notices have none). */
export interface RunEvent {
  seq: number | undefined;
  /** The SSE event name: the payload type (`text`, `approval_request`, `done`, …) or a notice. */
  type: string;
  data: any;
}

export interface FollowOptions {
  /** The last sequence already seen (resume after it). */
  after?: number;
  signal?: AbortSignal;
  /** Reconnects in a row before giving up (default 5). */
  retries?: number;
  retryDelayMs?: number;
}

export interface AgentAdaptorClient {
  /** Every REST operation, typed by the OpenAPI document. */
  api: Client<paths>;
  /** Follows a run's events until `done`, resuming with `Last-Event-ID` after a drop. */
  events(runId: string, options?: FollowOptions): AsyncGenerator<RunEvent, void>;
}

export interface ClientOptions {
  baseUrl: string;
  apiKey?: string;
  fetch?: (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;
}

export function createClient(options: ClientOptions): AgentAdaptorClient;

export function followEvents(
  url: string,
  options?: FollowOptions & { headers?: Record<string, string>; fetch?: ClientOptions["fetch"] },
): AsyncGenerator<RunEvent, void>;

export class ServiceError extends Error {
  status: number;
  code: components["schemas"]["ErrorCode"] | undefined;
  body: components["schemas"]["ErrorBody"] | undefined;
}
