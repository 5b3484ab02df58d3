// Vite builds the app into dist/, which server.mjs serves next to the CopilotKit runtime.
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

export default defineConfig({
  plugins: [react()],
  build: { outDir: "dist", sourcemap: false, chunkSizeWarningLimit: 4096 },
});
