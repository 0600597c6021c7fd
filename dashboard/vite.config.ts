// The bundle kobo embeds (service/src/http/dashboard.rs): fixed file names, so the Rust side
// can name them, one script and one style sheet, no inline script (the CSP forbids it), and
// the same bytes from the same sources (.ci/dashboard rebuilds and compares).
import { defineConfig } from "vite";

export default defineConfig({
  base: "/dashboard/",
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    modulePreload: false,
    cssCodeSplit: false,
    assetsInlineLimit: 0,
    rollupOptions: {
      output: {
        entryFileNames: "assets/dashboard.js",
        chunkFileNames: "assets/dashboard-[name].js",
        assetFileNames: "assets/dashboard[extname]",
        inlineDynamicImports: true,
      },
    },
  },
  server: {
    // `npm run dev`: the app from Vite, the API from a local kobo (KOBO_URL, default the demo's).
    proxy: {
      "/api": process.env.KOBO_URL ?? "http://127.0.0.1:8080",
    },
  },
});
