// Both real clients, side by side: the current 1.0.0 and CopilotKit's pinned 0.0.59.
import * as v1 from "agui-client-v1";
import * as v0 from "agui-client-v0";

/** The clients every scenario runs with. */
export const CLIENTS = [
  { name: "@ag-ui/client@1.0.0", HttpAgent: v1.HttpAgent },
  { name: "@ag-ui/client@0.0.59", HttpAgent: v0.HttpAgent },
];
