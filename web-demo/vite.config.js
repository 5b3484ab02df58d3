// Vite builds the app into dist/, which server.mjs serves next to the CopilotKit runtime. For UI work,
// `npm run dev` serves the sources with hot reload and proxies /api to a running server.mjs
// (DEMO_SERVER, default http://127.0.0.1:4111).
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

export default defineConfig({
  plugins: [react()],
  build: { outDir: "dist", sourcemap: false, chunkSizeWarningLimit: 4096 },
  server: {
    host: "127.0.0.1",
    proxy: { "/api": process.env.DEMO_SERVER ?? "http://127.0.0.1:4111" },
  },
});
