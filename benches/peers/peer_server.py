"""The Python peer for the benchmark: ag-ui-claude-sdk's FastAPI endpoint as its README sets it up.

`ClaudeAgentAdapter` behind `add_claude_fastapi_endpoint` at `/agent`, served by uvicorn on
127.0.0.1 (a free port), running the Claude CLI named by `--cli` in `--cwd`. The CLI's environment
is this process's (the offline environment of `mock-model-server --print-env`). Prints
`peer listening on http://127.0.0.1:<port>` once it accepts connections.

One route is the benchmark's own, outside every measured run: `POST /bench/release` stops every
session worker (each holds one CLI process), so samples do not pile up idle CLIs.
"""

import argparse
import logging
import socket
import sys

import uvicorn
from fastapi import FastAPI

from ag_ui_claude_sdk import ClaudeAgentAdapter, add_claude_fastapi_endpoint


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True, help="the Claude CLI binary")
    parser.add_argument("--cwd", required=True, help="the CLI's working directory")
    args = parser.parse_args()

    adapter = ClaudeAgentAdapter(name="claude", options={"cli_path": args.cli, "cwd": args.cwd})
    app = FastAPI()
    add_claude_fastapi_endpoint(app, adapter, path="/agent")

    @app.post("/bench/release")
    async def release():
        await adapter.shutdown()
        return {"released": True}

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    # Listening before uvicorn starts: early connections wait in the backlog instead of being refused.
    sock.listen(2048)
    logging.getLogger("ag_ui_claude_sdk").setLevel(logging.WARNING)
    print(f"peer listening on http://127.0.0.1:{port}", flush=True)
    # uvicorn's defaults otherwise (uvloop and httptools when installed, as they are here).
    uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False)).run(sockets=[sock])


if __name__ == "__main__":
    sys.exit(main())
